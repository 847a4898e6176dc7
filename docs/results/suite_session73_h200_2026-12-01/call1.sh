# Call 1 (nvidia-h200): the GPU suite after session 73's changes (publish and checkpoint-tool
# error paths, metrics/wandb logging, resume recipe and rewind, a data-parallel step test).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  -p no:cacheprovider 2>&1 | tail -25 | tee $OUT/call1_suite.txt; date -u
