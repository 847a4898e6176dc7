# Call 2 (nvidia-h200): tests/trainer on the GPU, the same tree as call 1.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 570 python -m pytest tests/trainer -q -rf -n 16 --dist worksteal -p no:cacheprovider \
  2>&1 | tail -25 | tee $OUT/call2_suite.txt; date -u
