# session 56, call 5 (from the repository root, .whl carried with .whl/kernels_main = the kernels
# at 505195e): `bench --only fp8` on a copy of docs/benchmarks.md (its section), then round 50's
# fp8_op_ab.py (the FP8 ops with the quantizer in the call, 505195e's kernels against this
# tree's beside bf16, seven rounds)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_old
R=docs/results/fp8_grouped_l2_h200_2026-11-30
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call5_gpu.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 300 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" > $OUT/call5_bench_fp8.txt
echo bench rc=$?; grep -E "Gluon|scaled_mm|passed|MISMATCH" $OUT/call5_bench_fp8.txt
timeout 250 python3 docs/results/fp8_act_quant_h200_2026-11-29/fp8_op_ab.py 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call5_fp8_op_ab.txt
