# session 41, call 8 (from the repository root): the WS kernel in CUDA graphs at EP8's
# 64-256 rows per expert
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 docs/results/ws_profile_h200_2026-11-28/call8_ws.py 2>&1 | tee $OUT/call8.txt
