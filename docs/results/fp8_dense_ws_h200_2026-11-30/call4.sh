# session 57, call 4 (from the repository root, .whl carried, now with .whl/test: the [test]
# extra's compressed-tensors 0.20.0 and its pure-Python dependencies, which the GPU machine
# lacks; call 3's one failure was its ImportError): the whole suite but the SGLang bridge's,
# one line a test, so that a run out of time still names its failures
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 470 python3 -m pytest -v -rfE -W ignore -p no:cacheprovider -n 16 tests --ignore=tests/rollout_sglang \
  --durations=10 > $OUT/call4_pytest.txt 2>&1
echo pytest rc=$?; grep -E "FAILED|ERROR" $OUT/call4_pytest.txt | head -20; tail -14 $OUT/call4_pytest.txt
