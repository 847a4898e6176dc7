# session 51, call 1 (from the repository root, .whl carried: the wheels and 1787b61's kernels/):
# the weight quantizers reading each expert's master in place (kernels/expert_masters.py):
# their GPU tests, the bench's quantize section, old against new kernels, and a step A/B
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_1787b61/kernels /tmp/pp/qarl_kernels_old
R=docs/results/masters_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_expert_masters.py \
  tests/kernels/test_w4a16_quantize.py tests/kernels/test_bf16_quantize.py \
  tests/kernels/test_int8.py tests/kernels/test_fp8.py tests/kernels/test_register.py \
  tests/kernels/test_nonfinite_count.py tests/megatron/test_cache.py 2>&1 | tail -3 \
  | tee $OUT/call1_pytest.txt
timeout 90 python3 $R/kernel_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call1_kernel_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call1_bench_quantize.txt
timeout 200 python3 $R/masters_ab.py 4 2>&1 | grep -v "Warning\|warn" | tee $OUT/call1_ab.txt
