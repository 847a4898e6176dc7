# Session 71, call 7 (2 x H200): the 2-GPU trainer tests after the step's diagnostics gather
# every data-parallel rank's rows (distributed.all_gather_rows on NCCL in RL steps at DP 2) and
# session 70's file rendezvous of the 2-GPU decode test, neither run on GPUs before.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 330 python -m pytest tests/trainer -q -rf -k "nccl or two_gpu or under_parallelism" -n 3 \
  --dist worksteal -p no:cacheprovider > $OUT/pytest.txt 2>&1
tail -8 $OUT/pytest.txt
