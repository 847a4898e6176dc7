# session 42, call 4 (from the repository root, .whl carried): `bench --only w4a16` with its
# new grad_input table, writing a copy of benchmarks.md
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 500 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/call4_bench.txt 2>&1
echo bench rc=$?; grep -A30 "grad_input (backward" $OUT/call4_bench.txt; tail -4 $OUT/call4_bench.txt
