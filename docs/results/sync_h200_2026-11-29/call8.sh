# session 49, call 8 (from the repository root, .whl carried): the FP8 dense call against its
# columns added, with one input and with inputs rotated past L2 (fp8_dense_l2.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 docs/results/sync_h200_2026-11-29/fp8_dense_l2.py 2>&1 | tee $OUT/call8_l2.txt
