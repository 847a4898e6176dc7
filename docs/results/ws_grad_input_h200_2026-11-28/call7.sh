# session 42, call 7 (from the repository root, .whl carried): `bench --only w4a16` with the
# final routing, then the GPU test suite (kernels, Megatron layers, trainer)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 150 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/call7_bench.txt 2>&1
echo bench rc=$?; grep -A24 "grad_input (backward" $OUT/call7_bench.txt | tail -21; tail -2 $OUT/call7_bench.txt
timeout 400 python3 -m pytest -q -W ignore -p no:cacheprovider -n 14 tests/kernels tests/megatron \
  tests/trainer > $OUT/call7_suite.txt 2>&1; echo suite rc=$?; tail -4 $OUT/call7_suite.txt
