# session 49, call 5 (from the repository root, .whl carried): session 48's permutation arms on
# the 200M model's GPU-bound step (32 x 1024), W4A16 and bf16 grouped experts
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 420 python3 docs/results/sync_h200_2026-11-29/permute_b32_ab.py 5 32 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call5_permute_b32.txt
