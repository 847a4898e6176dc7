# session 59, this folder's call 2 (from the repository root, .whl carried): the GEMV's tests
# on the GPU, then pdl_probe.py
D=docs/results/w4a16_gemv_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels

timeout 150 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_gemv.py \
  tests/kernels/test_w4a16_gemm.py 2>&1 | tail -4 | tee $OUT/call2_pytest.txt
timeout 380 python3 $D/pdl_probe.py 2>&1 | tee $OUT/call2_probe.txt | grep -v "^    "
