# session 56, call 11 (from the repository root, .whl carried): which thread-count test failed
# after test_grouped_bf16_experts.py in call 10, and by how many threads
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 100 python3 -m pytest -q -W ignore -p no:cacheprovider -rf tests/megatron/test_grouped_bf16_experts.py \
  tests/megatron/test_megatron_fixes.py 2>&1 | grep -E "^E  |^FAILED|passed|failed"
