# session 43, call 2 (from the repository root, .whl carried): the Gluon launches through the
# compiled-kernel cache (gluon_launch.py): the kernel, Megatron and trainer tests; host time a call
# with and without the cache
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_wide_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 $d/launch.py 2>&1 | tee $OUT/call2_launch.txt
timeout 420 python3 -m pytest -q -W ignore -p no:cacheprovider -n 14 tests/kernels tests/megatron tests/trainer 2>&1 | tail -15 | tee $OUT/call2_pytest.txt
