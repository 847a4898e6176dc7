# session 44, call 2 (from the repository root, .whl carried): tail.py's three sets (E128 and
# TP2 eager, EP8 in CUDA graphs, and below WS_ROWS_PER_EXPERT against the decode kernel)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for set in low ep8 e128; do timeout 250 python3 $d/tail.py 3 $set 2>&1 | tee $OUT/call2_$set.txt; done
