# session 43, call 6 (from the repository root, .whl carried): after the cache's module was
# renamed launch_cache.py: the Gluon kernels' tests and the cache's on the GPU
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 300 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_launch_cache.py \
  tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_w4a16_gluon.py tests/kernels/test_fp8_grouped_ws.py \
  2>&1 | tail -4 | tee $OUT/call6_pytest.txt
