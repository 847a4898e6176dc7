# Call 3 (nvidia-h200): the test files that session 77's three mutation reviews added or changed
# (tests/rollout_sglang's left out: it installs SGLang from PyPI), at a516ece.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 570 python -m pytest tests/megatron tests/trainer/test_rl_step_shares.py \
  tests/trainer/test_warm_start_step.py tests/trainer/test_batches.py \
  tests/trainer/test_metrics_log.py tests/trainer/test_rl_step_wiring.py \
  tests/trainer/test_sglang_flag_settings.py -q -rf -n 16 --dist worksteal -p no:cacheprovider \
  2>&1 | tail -25 | tee $OUT/call3_subset.txt; date -u
