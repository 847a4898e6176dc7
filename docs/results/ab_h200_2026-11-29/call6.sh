# session 45, call 6 (from the repository root, .whl carried; ws_before.py from 3cbb563,
# fp8_before.py and fp8_inloop.py beside this script, as the README says): the WS W4A16 kernel
# with its empty-consumer test out of the K loop (a third path that passes the stages on):
# its GPU tests and the backward's, then ab.py w4a16 against 3cbb563's kernel
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/docs/results/ab_h200_2026-11-29 PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -n 12 -p no:warnings tests/kernels/test_w4a16_grouped_ws.py \
  tests/kernels/test_moe_backward.py tests/kernels/test_w4a16_gemm.py 2>&1 | tail -3 \
  | tee $OUT/call6_pytest.txt
timeout 200 python3 docs/results/ab_h200_2026-11-29/ab.py w4a16 3 2>&1 | tee $OUT/call6_w4a16.txt
