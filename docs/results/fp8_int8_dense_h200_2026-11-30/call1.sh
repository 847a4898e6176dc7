# session 60, this folder's call 1 (from the repository root, .whl carried): dense_sweep.py,
# three rounds, 16-256 tokens
D=docs/results/fp8_int8_dense_h200_2026-11-30
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 540 python3 $D/dense_sweep.py 3 2>&1 | tee $OUT/call1_sweep.txt | grep -v " sweep "
