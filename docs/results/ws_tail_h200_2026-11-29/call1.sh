# session 44, call 1 (from the repository root, .whl carried): the WS kernel's tests with m64 row
# blocks, the backward's, then tail.py (m64 blocks against the kernel before, 3 alternating rounds)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_moe_backward.py 2>&1 | tail -15 | tee $OUT/call1_pytest.txt
timeout 370 python3 $d/tail.py 3 2>&1 | tee $OUT/call1_tail.txt
