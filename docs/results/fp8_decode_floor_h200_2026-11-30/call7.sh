# session 61, this folder's calls 7-9 (one command each, from the repository root, .whl
# carried): call 7 the FP8 and INT8 kernel tests with -rf after call 6's two failures (no log
# kept but the tail printed by the run tool), call 8 the largest output differences of the
# scaled_mm path, call 9 `pytest tests/kernels` with the tolerance of cuBLAS's FP8 path (call 9's
# first try ran on a fresh machine without the wheels installed: ImportError, not counted)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels -rf 2>&1 | tail -4
