# session 52, call 6 (as call 1): a zero dividend's quotient is the dividend itself (a where),
# since call 5's copy of its sign bit took the FP8 weight quantizer from 0.75x to 1.14x the old
# kernel's time; the division and FP8 tests, the FP8 A/B, the bench's quantize section
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_div_by_reciprocal.py \
  tests/kernels/test_fp8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_fp8_grouped_ws.py \
  tests/kernels/test_nonfinite_count.py tests/kernels/test_w4a16_quantize.py \
  tests/kernels/test_expert_masters.py tests/kernels/test_int8.py tests/megatron/test_cache.py \
  --tb=line 2>&1 | grep -v "Warn\|warn\|^  " | tail -4 | cut -c1-400 | tee $OUT/call6_pytest.txt
timeout 100 python3 $R/fp8_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call6_fp8_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | grep "^|" > $OUT/call6_bench_quantize.txt
