# Call 2 (nvidia-h200): the bench's FP8 section with M = 65536 among the grouped GEMM's tokens.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 210 python -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md 2>&1 | grep -v -i warn \
  | tail -60 > $OUT/call2_bench_fp8.txt; echo "bench rc ${PIPESTATUS[0]}"; date -u
