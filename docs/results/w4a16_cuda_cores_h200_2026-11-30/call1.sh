# session 58, call 4 of the session (from the repository root, .whl carried): W4A16 with the
# products on CUDA cores at 1-4 token rows a tile (cuda_cores_probe.py)
D=docs/results/w4a16_cuda_cores_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/call1_gpu.txt
timeout 500 python3 $D/cuda_cores_probe.py 2>&1 | tee $OUT/call1_probe.txt
