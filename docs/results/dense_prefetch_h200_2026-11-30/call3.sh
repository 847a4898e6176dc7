# session 62, this folder's call 3 (.whl carried): the GPU suite but the SGLang bridge's (its
# fixture installs SGLang from PyPI) at this session's tree, the first whole run since session 58
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
start=$(date +%s)
timeout 560 python3 -m pytest -v -W ignore -p no:cacheprovider -n 16 --dist worksteal tests \
  --ignore=tests/rollout_sglang --durations=25 > $OUT/call3_pytest.txt 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"
grep -E "^(FAILED|ERROR)" $OUT/call3_pytest.txt | head; tail -30 $OUT/call3_pytest.txt
