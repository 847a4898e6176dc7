# session 42, call 6 (from the repository root, .whl carried): `bench --only w4a16` with the
# n = 128 grad_input, then the grad_input sweep at 1024 and 2048 rows an expert (where the
# backward's routing bound lies)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_grad_input_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 300 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/call6_bench.txt 2>&1
echo bench rc=$?; grep -A24 "grad_input (backward" $OUT/call6_bench.txt | tail -21; tail -2 $OUT/call6_bench.txt
timeout 200 python3 $d/grad_ws.py time 512,1024,2048 2>&1 | tee $OUT/call6_time.txt
