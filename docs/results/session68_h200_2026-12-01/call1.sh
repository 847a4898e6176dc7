# Call 1 (nvidia-h200): the README's GPU line at HEAD (session 68's start: the narrowed layer-wise
# Muon check of c4d7869 and the thread counts after a collection had not run on a GPU).
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  > $OUT/call1_pytest.txt 2>&1; echo "suite rc=$? $(( $(date +%s) - start )) s"
grep -E "^FAILED|^ERROR" $OUT/call1_pytest.txt | head -20
tail -3 $OUT/call1_pytest.txt
