# session 47, call 2 (from the repository root, .whl carried): lanes_tiles.py (the fused
# quantizer with the lane order: rows a program x warps, and the probe loading in lane order);
# the kernel and Megatron tests on the GPU with the quantizer writing the lane order
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 230 python3 docs/results/lanes_h200_2026-11-29/lanes_tiles.py 2>&1 | tee $OUT/call2_tiles.txt
timeout 330 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels tests/megatron 2>&1 \
  | tail -4 | tee $OUT/call2_pytest.txt
