# Call 3 (nvidia-h200-x2, warm): call 2's four failures were the test's own wrapper of
# CachedForward.__call__ (it took no last_only); the decode-graph test again with it fixed.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
start=$(date +%s)
timeout 300 python -m pytest -v -rf tests/trainer/test_parallel_decode_graph.py -n 2 \
  > $OUT/call3_pytest.txt 2>&1; echo "rc=$? $(( $(date +%s) - start )) s"
grep -E "PASSED|FAILED|ERROR|SKIPPED" $OUT/call3_pytest.txt | cut -c1-150; tail -1 $OUT/call3_pytest.txt
