# session 52, call 4 (as call 1): call 3's failing division tests with their assertions, the
# FP8 A/B with its activation check fixed (scales are a transposed view), the bench's quantize
# section, and the Megatron-layer comparison at 32 x 1024 tokens
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_div_by_reciprocal.py \
  --tb=line 2>&1 | grep -v "Warn\|warn\|^  " | tail -24 | cut -c1-600 | tee $OUT/call4_pytest.txt
timeout 100 python3 $R/fp8_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call4_fp8_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | grep "^|" > $OUT/call4_bench_quantize.txt
timeout 150 python3 tools/bench_megatron_layers.py --batch 32 --steps 4 --warmup 2 \
  --tiny-steps 1 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 \
  --out $OUT/call4_megatron_layers_b32.json 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call4_layers_b32.txt
