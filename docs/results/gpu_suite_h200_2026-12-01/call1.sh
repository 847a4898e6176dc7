# Call 1 (nvidia-h200): the README's GPU line at de9ed3c, after session 65's test-isolation
# fixes (207d21e) that were not re-run on a GPU; -rf names failures even if the call is cut.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  > $OUT/call1_pytest.txt 2>&1; echo "suite rc=$? $(( $(date +%s) - start )) s"
grep -E "^FAILED|^ERROR" $OUT/call1_pytest.txt | head -20
tail -3 $OUT/call1_pytest.txt
