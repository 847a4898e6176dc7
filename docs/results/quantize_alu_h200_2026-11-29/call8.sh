# session 52, call 8 (as call 1): the INT8 row quantizer with several rows a program and its
# code from the bits of one add: its GPU tests, old against new for each rows-a-program
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
timeout 100 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py \
  tests/kernels/test_nonfinite_count.py tests/kernels/test_expert_masters.py \
  tests/kernels/test_swiglu_experts.py 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -8 | tee $OUT/call8_pytest.txt
timeout 120 python3 $R/int8_rows_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call8_int8_ab.txt
