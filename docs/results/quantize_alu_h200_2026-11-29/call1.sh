# session 52, call 1 (from the repository root, .whl carried: the wheels and 624b5f4's kernels/):
# the W4A16 quantizer without the IEEE division (numerics.div_by_bf16) and without the
# float-to-int conversion (numerics.int4_nibbles): its GPU tests (the exhaustive pairs on the
# hardware), old against new, program shapes, and the bench's quantize section
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_div_by_bf16.py \
  tests/kernels/test_expert_masters.py tests/kernels/test_w4a16_quantize.py \
  tests/kernels/test_int8.py tests/kernels/test_fp8.py tests/kernels/test_register.py \
  tests/kernels/test_nonfinite_count.py tests/megatron/test_cache.py 2>&1 | tail -3 \
  | tee $OUT/call1_pytest.txt
timeout 200 python3 $R/w4a16_ab.py sweep 2>&1 | grep -v "Warning\|warn" | tee $OUT/call1_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call1_bench_quantize.txt
