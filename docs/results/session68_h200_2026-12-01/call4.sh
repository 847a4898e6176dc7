# Call 4 (nvidia-h200): the GPU suite after the session's kernel input fixes (negative counts, write_rows'
# index, token_logprobs targets, routed_sum rows, grouped backward strides) and routing replay.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
start=$(date +%s)
timeout 560 python -m pytest tests -q -rf -n 16 --dist worksteal --ignore=tests/rollout_sglang \
  > $OUT/call4_pytest.txt 2>&1; echo "suite rc=$? $(( $(date +%s) - start )) s"
grep -E "^FAILED|^ERROR" $OUT/call4_pytest.txt | head -20
tail -3 $OUT/call4_pytest.txt
