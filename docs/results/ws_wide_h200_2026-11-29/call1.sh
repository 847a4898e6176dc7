# session 43, call 1 (from the repository root, .whl carried): the WS kernel's tests with the
# wide tiles; the wide tilings at EP8 under DP attention against the op and bf16; eager host time
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_wide_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_grouped_ws.py 2>&1 | tail -15 | tee $OUT/call1_pytest.txt
timeout 250 python3 $d/wide.py time 2>&1 | tee $OUT/call1_time.txt
timeout 60 python3 $d/wide.py host 2>&1 | tee $OUT/call1_host.txt
