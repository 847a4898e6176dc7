# session 52, call 9 (as call 1): call 8's INT8 kernel reverted (activations 1.03-1.15x slower);
# instead the old kernel whose masters' NaN/inf count runs only where a row's amax says so:
# its tests, and int8_ab.py (call 5's) against 624b5f4
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
timeout 80 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py \
  tests/kernels/test_nonfinite_count.py tests/kernels/test_expert_masters.py 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -8 | tee $OUT/call9_pytest.txt
timeout 60 python3 $R/int8_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call9_int8_ab.txt
