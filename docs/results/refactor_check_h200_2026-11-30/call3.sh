# Call 3 (nvidia-h200-x2): the tests that need two GPUs (NCCL, torchrun), after the trainer
# bound its GPU to the NCCL process group (init_process_group's device_id).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name --format=csv,noheader
start=$(date +%s)
timeout 480 python -m pytest -v tests/trainer -k "nccl or two_gpu or under_parallelism" -p no:xdist \
  > $OUT/call3_pytest.txt 2>&1; echo "rc=$? $(( $(date +%s) - start )) s"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/call3_pytest.txt | cut -c1-150; tail -1 $OUT/call3_pytest.txt
