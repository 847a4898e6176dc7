# session 52, call 2 (as call 1): the exhaustive division tests on the GPU (call 1's failed to
# build: the test passed a Python global into its kernel), and old against new with the bf16
# masters' lane-order programs at 32 rows and one warp (program_shape)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/quantize_alu_h200_2026-11-29
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_div_by_bf16.py \
  tests/kernels/test_w4a16_quantize.py tests/kernels/test_expert_masters.py 2>&1 | tail -3 \
  | tee $OUT/call2_pytest.txt
timeout 100 python3 $R/w4a16_ab.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call2_ab.txt
