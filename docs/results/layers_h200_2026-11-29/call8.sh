# session 46, call 8 (from the repository root, .whl carried): the W4A16 quantize-and-pack
# kernel's rows a program x warps (w4a16_quant_tiles.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 docs/results/layers_h200_2026-11-29/w4a16_quant_tiles.py 2>&1 \
  | tee $OUT/call8_tiles.txt
