# session 56, call 7 (from the repository root, .whl carried): which Megatron-layer test failed
# in call 6 (it ran out of time with one F): the failures first, then the rest
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 420 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 -rf --maxfail=1 tests/megatron \
  > $OUT/call7_pytest_megatron.txt 2>&1
echo megatron rc=$?; grep -E "^FAILED|Error|error|assert|passed|failed" $OUT/call7_pytest_megatron.txt | head -30
