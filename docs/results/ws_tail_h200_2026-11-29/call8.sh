# session 44, call 8 (from the repository root, .whl carried): abba.py (grad_input before / final
# without short tiles / final with them, in balanced order)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 110 python3 docs/results/ws_tail_h200_2026-11-29/abba.py 2>&1 | tee $OUT/call8_abba.txt
