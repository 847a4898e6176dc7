# session 45, call 1 (from the repository root, .whl carried; the working tree held fp8_before.py
# and ws_before.py beside this script, made as ab.py's docstring says): the FP8 WS kernel's GPU
# tests with its consumers skipping empty halves, then ab.py fp8, w4a16 and skew
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/docs/results/ab_h200_2026-11-29 PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 150 python3 -m pytest -q -n 12 -p no:warnings tests/kernels/test_fp8_grouped_ws.py \
  tests/kernels/test_fp8.py tests/kernels/test_swiglu_experts.py tests/kernels/test_routed_rows.py \
  2>&1 | tail -5 | tee $OUT/call1_pytest.txt
R=docs/results/ab_h200_2026-11-29
timeout 120 python3 $R/ab.py fp8 3 2>&1 | tee $OUT/call1_fp8.txt
timeout 120 python3 $R/ab.py w4a16 3 2>&1 | tee $OUT/call1_w4a16.txt
timeout 150 python3 $R/ab.py skew 2 2>&1 | tee $OUT/call1_skew.txt
