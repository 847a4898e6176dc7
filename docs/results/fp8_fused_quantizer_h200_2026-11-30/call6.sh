# session 63, call 6 (from the repository root, .whl carried): the whole suite but the SGLang
# bridge's on the GPU at this tree (6870640's code), as README.md gives the GPU command
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
start=$(date +%s)
timeout 540 python3 -m pytest tests -q -n 16 --dist worksteal --ignore=tests/rollout_sglang --durations=15 > $OUT/call6_pytest.txt 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s"; tail -22 $OUT/call6_pytest.txt
