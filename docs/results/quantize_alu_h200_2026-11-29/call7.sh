# session 52, call 7 (as call 1): the Megatron-layer and trainer GPU tests through this tree's
# quantizers (the weight cache quantizes every step with them)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 540 python3 -m pytest -q -n 16 -p no:cacheprovider tests/megatron tests/trainer 2>&1 \
  | grep -E "passed|failed|^FAILED|^ERROR" | tail -12 | tee $OUT/call7_pytest.txt
