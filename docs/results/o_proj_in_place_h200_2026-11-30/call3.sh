# session 58, call 3 (from the repository root, .whl carried): the GPU suite but the SGLang
# bridge's (its fixture installs SGLang from PyPI) with xdist's work stealing, which session
# 57 suggested for the ~8 min tail that the default `load` leaves on one worker (all of
# test_resume.py's long tests in one initial chunk)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
python3 -c "import xdist; print('pytest-xdist', xdist.__version__)" | tee $OUT/call3_env.txt
git log -1 --format=%h >> $OUT/call3_env.txt 2>/dev/null
start=$(date +%s)
timeout 560 python3 -m pytest -v -W ignore -p no:cacheprovider -n 16 --dist worksteal tests \
  --ignore=tests/rollout_sglang --durations=25 > $OUT/call3_pytest.txt 2>&1
echo "pytest rc=$? in $(( $(date +%s) - start )) s" | tee -a $OUT/call3_env.txt
grep -E "^(FAILED|ERROR)" $OUT/call3_pytest.txt | head; tail -32 $OUT/call3_pytest.txt
