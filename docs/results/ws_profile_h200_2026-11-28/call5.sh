# session 41, call 5 (from the repository root, .gl carried: call 4's kernel as
# w4a16_grouped_ws_early.py): the race check and the lower routing bound, then
# `bench --only w4a16` again
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp .gl/w4a16_grouped_ws_early.py kernels/
d=docs/results/ws_profile_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 250 python3 $d/call5_ws.py 2>&1 | tee $OUT/call5.txt; echo call5 rc=$?
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python3 -m qarl_kernels.bench --only w4a16 --doc $OUT/benchmarks.md > $OUT/bench.txt 2>&1
echo bench rc=$?; tail -4 $OUT/bench.txt
