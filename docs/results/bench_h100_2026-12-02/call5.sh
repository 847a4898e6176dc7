# Call 5 (nvidia-h100-x1): the rest of the GPU suite on the H100 (call 4 ran tests/kernels,
# quant and megatron): tests/trainer, checkpoint, rl and the documented commands, with work
# stealing over 16 workers; cut at 290 s to stay inside this session's device time.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 290 python -m pytest tests/trainer tests/checkpoint tests/rl tests/test_documented_commands.py \
  -q -rf -n 16 --dist worksteal -p no:cacheprovider -W ignore 2>&1 | tail -8 | tee $OUT/call5_suite.txt
date -u
