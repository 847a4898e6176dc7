# session 49, call 1 (from the repository root, .whl carried): the step's frameless W4A16 sync
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/sync_h200_2026-11-29
for s in w4a16 fp8-block; do
  timeout 120 python3 $R/sync_trace.py $s 2>&1 | tee $OUT/call1_trace_$s.txt
done
