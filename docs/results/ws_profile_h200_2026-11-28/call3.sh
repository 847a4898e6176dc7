# session 41, call 3 (from the repository root, .gl carried: round 36's w4a16_grouped_ws.py)
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp .gl/w4a16_grouped_ws_old.py kernels/
d=docs/results/ws_profile_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 90 python3 $d/call3_ws.py check 2>&1 | tee $OUT/check.txt | grep -c OK; grep -v OK $OUT/check.txt | tail -8
timeout 300 python3 $d/call3_ws.py time 2>&1 | tee $OUT/time.txt; echo time rc=$?
