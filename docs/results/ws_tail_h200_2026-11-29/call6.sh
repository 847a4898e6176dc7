# session 44, call 6 (from the repository root, .whl carried): the epilogue's indices made once
# a consumer again (calls 4-5 made them per tile; grad_input at 512-1024 rows an expert ran
# 1.03-1.05x the kernel before): the WS kernel's and the backward's tests, tail.py's E128 / TP2 set
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_moe_backward.py 2>&1 | tail -3 | tee $OUT/call6_pytest.txt
timeout 250 python3 $d/tail.py 3 e128 2>&1 | tee $OUT/call6_e128.txt
