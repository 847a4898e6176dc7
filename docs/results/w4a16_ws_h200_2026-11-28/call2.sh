# session 40, call 2 (from the repository root): variants of the WS W4A16 kernel
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/w4a16_ws_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 70 python3 $d/call2_ws.py check 2>&1 | tee $OUT/check.txt | grep -c OK; grep -v OK $OUT/check.txt | tail -5
timeout 150 python3 $d/call2_ws.py time 2>&1 | tee $OUT/time.txt; echo time rc=$?
