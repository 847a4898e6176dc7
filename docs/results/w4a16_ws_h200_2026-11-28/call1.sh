# session 40, call 1 (from the repository root): the WS W4A16 kernel checked, then timed
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/w4a16_ws_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 80 python3 $d/call1_ws.py check 2>&1 | tee $OUT/check.txt | grep -v "^\s*$" | tail -20; echo check rc=$?
timeout 150 python3 $d/call1_ws.py time 4096 16384 2>&1 | tee $OUT/time.txt | grep -v "^\s*$"; echo time rc=$?
