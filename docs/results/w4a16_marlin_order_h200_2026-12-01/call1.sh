# Session 70, call 1: the whole test suite on the GPU at 3b2a6ae, session 69's last commit (its
# rewritten Hopper epilogue tests, the test-order fixture and scheme none's reference never ran
# on a GPU), then the kernel tests alone to time them.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  -p no:cacheprovider > $OUT/pytest.txt 2>&1
tail -15 $OUT/pytest.txt
