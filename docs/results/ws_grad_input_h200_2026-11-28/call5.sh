# session 42, call 5 (from the repository root, .whl and .gl carried): grad_input with one
# n = 128 wgmma over the operand stage's two halves; its tests, the ragged check, and its time
# against call 1's two n = 64 accumulators
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp .gl/w4a16_grouped_ws_n64.py kernels/
d=docs/results/ws_grad_input_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 \
  tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_moe_backward.py 2>&1 | tail -4 | tee $OUT/call5_pytest.txt
timeout 100 python3 $d/grad_ws.py check 2>&1 | tee $OUT/call5_check.txt
timeout 200 python3 $d/grad_ws.py n128 2>&1 | tee $OUT/call5_n128.txt
