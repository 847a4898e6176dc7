# session 53, call 7 (as call 1): the bench's quantize section with the kernels timed in CUDA
# graphs (call 6 found do_bench timing the host), and every kernel test on the GPU
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call7_gpu.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | grep "^|\|^Checked\|^GPU" > $OUT/call7_bench_quantize.txt
cat $OUT/call7_bench_quantize.txt
timeout 330 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -12 | tee $OUT/call7_pytest.txt
