# session 51, call 2 (.whl carried): after the master table's host cost was cut, kernel_ab.py
# and the bench's quantize section again, and the step A/B at 16 x 1024 tokens
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_1787b61/kernels /tmp/pp/qarl_kernels_old
R=docs/results/masters_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_expert_masters.py 2>&1 \
  | tail -2 | tee $OUT/call2_pytest.txt
timeout 90 python3 $R/kernel_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_kernel_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call2_bench_quantize.txt
timeout 280 python3 $R/masters_ab2.py 6 16 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_ab.txt
