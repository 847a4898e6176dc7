# session 62, this folder's call 4 (.whl carried; .whl/kernels_main = kernels/ at 273ccb4):
# INT8's narrow split capped at four slices (int8_gemm.NARROW_MAX_SPLIT), the op against
# 273ccb4's with round 55's A/B (seven rounds, 1-32 tokens; FP8 and the experts block as
# controls); then the dense section of the benchmark into a copy of docs/benchmarks.md
D=docs/results/dense_prefetch_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 240 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 7 1 8 16 32 2>&1 | tee $OUT/call4_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 240 python3 -m qarl_kernels.bench --only dense --doc $OUT/benchmarks.md > $OUT/call4_bench.txt 2>&1
echo "bench rc=$?"; grep -E "MISMATCH|cases passed" $OUT/call4_bench.txt
