# session 47, call 4 (from the repository root, .whl carried): the training step of 2 exact
# Qwen3-30B-A3B layers (E128 on one GPU, 256 rows an expert at 4 x 1024 tokens: the WS kernel,
# which reads the lane order), the quantizer writing the lane order against the reorder, A B B A
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 400 python3 docs/results/lanes_h200_2026-11-29/lanes_ab.py 6 2 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call4_ab.txt
