# session 49, call 7 (from the repository root, .whl carried): `bench --only fp8` with the
# FP8 dense rows of Qwen3-30B-A3B's attention projections at 4096 and 16384 tokens (qkv
# 5120x2048, o_proj 2048x4096) beside the expert shape's, the activation quantizer in the call
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 240 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md > $OUT/call7_bench.txt 2>&1
echo bench rc=$?
grep "dense scaled_mm\|passed\|FAIL" $OUT/call7_bench.txt
