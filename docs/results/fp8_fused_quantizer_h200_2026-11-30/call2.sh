# session 63, this folder's call 2 (.whl carried; .whl/kernels_main = kernels/ at 6870640):
# call 1's fused kernel with x read one K block ahead (as the scales are), 1-32 tokens
D=docs/results/fp8_fused_quantizer_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 150 python3 -m pytest -q -n 8 tests/kernels/test_fp8.py -k "quantizing_x or dense" 2>&1 | tail -2 | tee $OUT/call2_pytest.txt
timeout 300 python3 docs/results/fp8_int8_pdl_h200_2026-11-30/pdl_ab.py 5 1 8 16 32 2>&1 | grep -v INT8 | tee $OUT/call2_ab.txt
