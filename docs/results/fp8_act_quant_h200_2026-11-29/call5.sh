# session 54, call 5 (the round's final kernels: two blocks a program from 2048 rows of bf16):
# the FP8 quantizers old against new, `bench --only fp8` on a copy of docs/benchmarks.md,
# the kernel tests on the GPU
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_act_quant_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call5_gpu.txt
timeout 150 python3 $R/act_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call5_act_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md 2>&1 | grep -v "Warning\|warn" | tail -40 > $OUT/call5_bench_fp8.txt
timeout 200 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -12 | tee $OUT/call5_pytest.txt
