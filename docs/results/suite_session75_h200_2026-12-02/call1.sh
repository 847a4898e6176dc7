# Call 1 (nvidia-h200): the trainer, checkpoint and RL tests on the GPU after session 75's
# changes (the resume's optimizer flags, the saved-model check, whole flags, the metrics mark).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
/usr/bin/time -f "%e s" timeout 560 python -m pytest -q -rfE -n 16 --dist worksteal -p no:cacheprovider \
  tests/trainer tests/checkpoint tests/rl 2>&1 | tail -15 | tee $OUT/call1_pytest.txt
