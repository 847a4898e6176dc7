# session 59, this folder's call 1 (from the repository root, .whl carried; .whl/kernels_main =
# kernels/ at 2925533, whose FP8 and INT8 kernels are 1e72b99's): the FP8/INT8 kernels' tests on
# the GPU, then pdl_ab.py
D=docs/results/fp8_int8_pdl_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 100 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels/test_fp8.py tests/kernels/test_int8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_swiglu_experts.py tests/kernels/test_w4a16_gemv.py 2>&1 | tail -3 | tee $OUT/call1_pytest.txt
timeout 250 python3 $D/pdl_ab.py 2>&1 | tee $OUT/call1_ab.txt
