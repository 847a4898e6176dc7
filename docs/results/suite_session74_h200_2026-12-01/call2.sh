# Call 2 (nvidia-h200): the rest of the GPU suite (Megatron layers, trainer, embedded engine,
# checkpoint tools, RL) after session 74's changes (data rows and tokenizers, checkpoint
# refusals, quant.ops layout checks).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
timeout 570 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  --ignore=tests/kernels --ignore=tests/quant -p no:cacheprovider 2>&1 | tail -25 \
  | tee $OUT/call2_suite.txt; date -u
