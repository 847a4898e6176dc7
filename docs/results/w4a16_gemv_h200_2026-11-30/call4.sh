# session 59, this folder's call 4 (from the repository root, .whl carried; .whl/kernels_main =
# kernels/ at 2925533): the kernels' tests on the GPU, then route_ab.py again, x's loads unmasked where K fills the steps (call 3's build spilled)
D=docs/results/w4a16_gemv_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels 2>&1 | tail -4 | tee $OUT/call4_pytest.txt
timeout 330 python3 $D/route_ab.py 2>&1 | tee $OUT/call4_ab.txt | grep -v "by round"
