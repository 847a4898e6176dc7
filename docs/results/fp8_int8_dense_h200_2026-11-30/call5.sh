# session 60, this folder's call 5 (.whl carried, the machine still warm): the GPU suite but the
# SGLang bridge's, with work stealing, at call 4's code
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
start=$(date +%s)
timeout 470 python3 -m pytest -v -W ignore -p no:cacheprovider -n 16 --dist worksteal tests \
  --ignore=tests/rollout_sglang > $OUT/call5_pytest.txt 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"
grep -E "^(FAILED|ERROR)" $OUT/call5_pytest.txt | head; tail -2 $OUT/call5_pytest.txt
