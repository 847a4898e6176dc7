# Call 2 (nvidia-h200): the benchmark after its checks were made to read what it times (9108a5e):
# the W4A16 decode tables, then the dense, experts-block and sampler parts. Tables go to $OUT, not
# to docs/benchmarks.md (its figures are the H100's).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 230 python -m qarl_kernels.bench --decode-only --doc $OUT/benchmarks.md \
  > $OUT/call2_decode.txt 2>&1; echo "decode rc=$? $(( $(date +%s) - start )) s"
start=$(date +%s)
timeout 300 python -m qarl_kernels.bench --only dense --only experts --only sampler \
  --doc $OUT/benchmarks.md > $OUT/call2_parts.txt 2>&1; echo "parts rc=$? $(( $(date +%s) - start )) s"
grep -h -E "MISMATCH|Checked against|Error|error" $OUT/call2_decode.txt $OUT/call2_parts.txt | head -30
