# Session 71, call 1: the whole test suite on the GPU at ac9f73e, session 70's last commit
# (948cac2 onward never ran on a GPU: a one-process trainer's NCCL init on dist.HashStore, the
# step-wide diagnostics, the WS routing test's fixed count, the 2-GPU decode test's file rendezvous).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1 2>/dev/null || true
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  -p no:cacheprovider > $OUT/pytest.txt 2>&1
tail -15 $OUT/pytest.txt
