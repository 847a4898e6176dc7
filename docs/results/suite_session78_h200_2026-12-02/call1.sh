# Call 1 (nvidia-h200): session 78's GPU suite, part 1: tests/trainer and the new
# tests/test_documented_commands.py, at 614d7f7 (the docs audit's fixes, hf-to-megatron's
# refusal of a Megatron checkpoint, the tools/compat/models review's tests, pytest-timeout).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 570 python -m pytest tests/trainer tests/test_documented_commands.py \
  -q -rf -n 16 --dist worksteal -p no:cacheprovider 2>&1 | tail -25 | tee $OUT/call1_suite.txt; date -u
