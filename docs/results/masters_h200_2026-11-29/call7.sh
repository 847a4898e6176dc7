# session 51, call 7 (.whl carried): adam_step2.py (call 6's adam_step.py with the model moved
# to the GPU before Megatron's optimizer wraps its params)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 docs/results/masters_h200_2026-11-29/adam_step2.py 5 w4a16 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call7_adam_step.txt
