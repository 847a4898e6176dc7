# session 48, call 3 (from the repository root, .whl carried): the kernel and Megatron-layer
# tests at this session's tree; where a training step of 2 Qwen3-30B-A3B layers waits on the
# GPU (sync_points.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/refresh_h200_2026-11-29
timeout 120 python3 $R/sync_points.py w4a16 fp8-block int8 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call3_sync_points.txt
timeout 420 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels tests/megatron 2>&1 \
  | tail -3 | tee $OUT/call3_pytest.txt
