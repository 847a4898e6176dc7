# Call 3 (nvidia-h200): the W4A16 decode tables again (the fused SwiGLU's graph output now checked
# by relative norm, after call 2's elementwise check failed on 0.01% of outputs) and the W4A16
# part (its graph outputs, the kept operand against torch's dequantize, dequantize +
# grouped_mm checked before timing). Tables go to $OUT.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 200 python -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md \
  > $OUT/call3_decode.txt 2>&1; echo "decode rc=$? $(( $(date +%s) - start )) s"
start=$(date +%s)
timeout 330 python -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md \
  > $OUT/call3_w4a16.txt 2>&1; echo "w4a16 rc=$? $(( $(date +%s) - start )) s"
grep -h -E "MISMATCH|Checked against|Error|error" $OUT/call3_decode.txt $OUT/call3_w4a16.txt | head -30
