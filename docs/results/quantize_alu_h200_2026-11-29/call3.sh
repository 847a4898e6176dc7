# session 52, call 3 (as call 1): the FP8 quantizers without the IEEE division for bf16 values
# (numerics.div_by_reciprocal): the division and quantizer tests on the GPU, old against new,
# the FP8 GEMM table with medians of 7 rounds (session 50's fp8_rounds.py), the quantize section
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_div_by_reciprocal.py \
  tests/kernels/test_fp8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_fp8_grouped_ws.py \
  tests/kernels/test_int8.py tests/kernels/test_nonfinite_count.py \
  tests/kernels/test_w4a16_quantize.py tests/kernels/test_expert_masters.py \
  tests/megatron/test_cache.py 2>&1 | tail -4 | tee $OUT/call3_pytest.txt
timeout 100 python3 $R/fp8_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call3_fp8_ab.txt
timeout 200 python3 docs/results/swiglu_h200_2026-11-29/fp8_rounds.py 7 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call3_fp8_rounds.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tail -30 > $OUT/call3_bench_quantize.txt
