# session 49, call 9 (from the repository root, .whl carried): `bench --only fp8` with each
# column of its FP8 table the median of three rounds of its graphs
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md > $OUT/call9_bench.txt 2>&1
echo bench rc=$?
grep "scaled_mm\|Gluon WS\|passed\|FAIL" $OUT/call9_bench.txt | grep -v "^|"
