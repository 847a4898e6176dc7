# session 41, call 4 (from the repository root): GPU tests of the WS kernel and its routing,
# the WS kernel below 256 rows per expert, then `bench --only w4a16` (fills the WS columns)
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_profile_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_w4a16_operand.py tests/kernels/test_w4a16_gemm.py > $OUT/pytest.txt 2>&1
echo pytest rc=$?; tail -3 $OUT/pytest.txt
timeout 120 python3 $d/call4_ws.py 2>&1 | tee $OUT/small.txt; echo small rc=$?
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 280 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/bench.txt 2>&1
echo bench rc=$?; tail -5 $OUT/bench.txt
