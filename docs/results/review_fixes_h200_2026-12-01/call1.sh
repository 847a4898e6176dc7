# Call 1 (nvidia-h200): the GPU suite after session 65's review fixes (MIS weighting, exact
# zero advantages, the router-dtype warning, the process groups' timeout, the SGLang bridge's
# stale engines / expert-split check / one IPC copy a bucket, the checkpoint tools' output and
# path checks, hf_assets/ in training checkpoints and the model check at resume).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 540 python -m pytest tests -q -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  > $OUT/call1_pytest.txt 2>&1; echo "suite rc=$? $(( $(date +%s) - start )) s"
tail -4 $OUT/call1_pytest.txt
