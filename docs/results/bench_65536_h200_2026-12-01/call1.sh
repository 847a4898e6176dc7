# Call 1 (nvidia-h200): the bench's W4A16 section with M = 65536 among the grouped GEMM's tokens
# (performance.md's protocol lists it; TOKENS lacked it).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 560 python -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md 2>&1 | grep -v -i warn \
  | tail -80 > $OUT/call1_bench_w4a16.txt; echo "bench rc ${PIPESTATUS[0]}"; date -u
