# Call 1 (nvidia-h200): the GPU suite at session 77's start (b343229: session 76's bench rate
# columns, routing_replay's length check, hf_config's RoPE default and that session's tests),
# all but tests/trainer and tests/rollout_sglang.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 570 python -m pytest tests/kernels tests/quant tests/megatron tests/checkpoint tests/rl \
  -q -rf -n 16 --dist worksteal -p no:cacheprovider 2>&1 | tail -25 | tee $OUT/call1_suite.txt; date -u
