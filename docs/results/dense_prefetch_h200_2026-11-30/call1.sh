# session 62, this folder's call 1 (.whl carried; .whl/kernels_main = kernels/ at 273ccb4):
# prefetch_ab.py (five rounds, 1-256 tokens); the kernels' GPU tests with the prefetch
D=docs/results/dense_prefetch_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.whl/kernels_main/kernels /tmp/pp/qarl_kernels_main
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 330 python3 $D/prefetch_ab.py 5 1 8 16 32 64 128 256 2>&1 | tee $OUT/call1_ab.txt
timeout 200 python3 -m pytest -q -n 16 tests/kernels -x 2>&1 | tail -4 | tee $OUT/call1_pytest.txt
