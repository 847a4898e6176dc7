# session 44, call 4 (from the repository root, .whl carried): the final kernel (whole tiles one
# [128, cols] accumulator, short ones m64) and WS range (from 129 rows an expert): the kernels'
# and Megatron layers' GPU tests; tail.py at 129 rows an expert; `bench --only w4a16`
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 14 tests/kernels tests/megatron 2>&1 | tail -4 | tee $OUT/call4_pytest.txt
timeout 80 python3 $d/tail.py 3 start 2>&1 | tee $OUT/call4_start.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 240 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/call4_bench.txt 2>&1
echo bench rc=$?; grep -B2 -A24 "W4A16 grouped GEMM (MoE" $OUT/call4_bench.txt | tail -24; grep -A24 "grad_input (backward" $OUT/call4_bench.txt | tail -21; tail -2 $OUT/call4_bench.txt
