# session 54, call 2: the FP8 quantizers old (HEAD before round 50, .whl/kernels_main) against
# new, then `bench --only fp8` on a copy of docs/benchmarks.md
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_act_quant_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call2_gpu.txt
timeout 240 python3 $R/act_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_act_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 300 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md 2>&1 | grep -v "Warning\|warn" | tail -40 | tee $OUT/call2_bench_fp8.txt
