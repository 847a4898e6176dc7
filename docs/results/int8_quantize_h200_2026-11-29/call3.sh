# session 53, call 3 (as call 1): the INT8 row quantizer's block and bytes a thread swept in
# CUDA graphs (THREAD_BYTES made a module constant for it; kernels otherwise as call 1)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
ln -sfn $PWD/.whl/kernels_624b5f4/kernels /tmp/pp/qarl_kernels_old
R=docs/results/int8_quantize_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/call3_gpu.txt
timeout 400 python3 $R/int8_graph_sweep.py 2>&1 | grep -v "Warning\|warn" | tee $OUT/call3_int8_graph_sweep.txt
