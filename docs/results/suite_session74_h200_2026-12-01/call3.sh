# Call 3 (nvidia-h200): after calls 1-2, the test files of the later changes (metrics: NaN on
# the console line, rollout_sha1 over data-parallel ranks, the sequence mismatch before the
# clamp; flags refused instead of ignored or crashing; an absent SGLang engine's error line).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 570 python -m pytest tests/trainer/test_end_to_end.py tests/trainer/test_data_and_rewards.py \
  tests/trainer/test_metrics_log.py tests/trainer/test_data_parallel_step.py \
  tests/trainer/test_sglang_flags.py tests/rl tests/checkpoint/test_checkpoint_errors.py \
  tests/checkpoint/test_checkpoint_cli.py -q -rf -n 16 --dist worksteal -p no:cacheprovider \
  2>&1 | tail -6 | tee $OUT/call3_subset.txt; date -u
