# session 62, this folder's call 6 (.whl carried; .whl/kernels_main = kernels/ at 273ccb4):
# INT8's rows of 768 in one pass over 512 + 256 against one masked block of 1024; the INT8
# tests on the GPU
D=docs/results/dense_prefetch_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 150 python3 $D/int8_tail_ab.py 7 2>&1 | tee $OUT/call6_ab.txt
timeout 150 python3 -m pytest -q -n 16 tests/kernels/test_int8.py tests/kernels/test_split_k.py 2>&1 | tail -2 | tee $OUT/call6_pytest.txt
