# session 61, this folder's call 6 (.whl carried): after ONE_PASS_K = 4096 (INT8 quantizer):
# the kernels' tests, then the dense section of the benchmark into a copy of docs/benchmarks.md
# (copied back)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 150 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels 2>&1 | tail -2 | tee $OUT/call6_pytest.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 220 python3 -m qarl_kernels.bench --only dense --doc $OUT/benchmarks.md > $OUT/call6_bench.txt 2>&1
echo "bench rc=$?"; grep -E "MISMATCH|cases passed" $OUT/call6_bench.txt
