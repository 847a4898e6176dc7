# session 44, call 3 (from the repository root, .whl carried): tail.py at 128-144 rows an expert
# (where the WS kernel's range should start) and again at 512-1024 (grad_input's ratio moved
# between calls 1 and 2)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for set in bound large; do timeout 280 python3 $d/tail.py 3 $set 2>&1 | tee $OUT/call3_$set.txt; done
