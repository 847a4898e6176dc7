# session 62, this folder's call 8 (.whl carried; .whl/kernels_main = kernels/ at 273ccb4):
# INT8's weight quantizer on W2's rows of 768 in one pass over 512 + 256; the INT8 tests
D=docs/results/dense_prefetch_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 100 python3 $D/int8_masters_ab.py 5 2>&1 | tee $OUT/call8_ab.txt
timeout 60 python3 -m pytest -q -n 16 tests/kernels/test_int8.py 2>&1 | tail -2 | tee $OUT/call8_pytest.txt
