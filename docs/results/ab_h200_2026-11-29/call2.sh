# session 45, call 2 (from the repository root, .whl carried; fp8_before.py, fp8_inloop.py and
# ws_before.py beside this script): the FP8 WS kernel with the empty-consumer test hoisted out
# of its K loop against call 1's (in the loop) and the kernel before; then the kernel and
# Megatron-layer GPU tests at that tree
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/docs/results/ab_h200_2026-11-29 PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 docs/results/ab_h200_2026-11-29/ab.py fp8 3 2>&1 | tee $OUT/call2_fp8.txt
timeout 360 python3 -m pytest -q -n 16 -p no:warnings tests/kernels tests/megatron 2>&1 \
  | tail -6 | tee $OUT/call2_pytest.txt
