# session 43, call 4 (from the repository root, .whl carried): host time a call with and
# without the compiled-kernel cache in 7 alternating rounds (call 3's single rounds disagreed
# with call 2's)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_wide_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; nproc; uptime
timeout 150 python3 $d/launch.py 7 2>&1 | grep -v "^ " | tee $OUT/call4_launch.txt
