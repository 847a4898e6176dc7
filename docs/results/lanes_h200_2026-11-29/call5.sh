# session 47, call 5 (from the repository root, .whl carried): lanes_profile.py, the kernel time
# of the 2-layer Qwen3-30B-A3B step with the lane order written by the quantizer and with the
# reorder
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 300 python3 docs/results/lanes_h200_2026-11-29/lanes_profile.py 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call5_profile.txt | grep -A14 "=====\|Self CUDA time total"
