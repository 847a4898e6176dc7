# session 46, call 7 (from the repository root, .whl carried): the sections whose INT8 rows the
# row quantizer changes: `bench --only quantize` (master weights) and `--only experts` (the
# fused SwiGLU quantizer, now one pass)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/
for part in quantize experts; do
  timeout 170 python3 -m qarl_kernels.bench --only $part --doc $OUT/benchmarks.md \
    > $OUT/call7_$part.txt 2>&1; echo $part rc=$?
  grep "^| \|passed\|FAIL" $OUT/call7_$part.txt | tail -30
done
