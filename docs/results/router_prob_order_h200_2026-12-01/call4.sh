# Session 69, call 4: the whole test suite on the GPU at the commit that made the experts' order
# SGLang's (calls 1-2 ran the kernel tests only).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  -p no:cacheprovider > $OUT/pytest.txt 2>&1
tail -15 $OUT/pytest.txt
