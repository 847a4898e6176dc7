# session 42, call 1 (from the repository root, .whl and .gl carried: round 37's kernel as
# w4a16_grouped_ws_r37.py): the WS kernel's tests (forward and grad_input), the grad_input
# check and sweep, the forward against round 37's kernel
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp .gl/w4a16_grouped_ws_r37.py kernels/
d=docs/results/ws_grad_input_h200_2026-11-28
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_grouped_ws.py 2>&1 | tail -15 | tee $OUT/call1_pytest.txt
timeout 100 python3 $d/grad_ws.py check 2>&1 | tee $OUT/call1_check.txt
timeout 100 python3 $d/grad_ws.py forward 2>&1 | tee $OUT/call1_forward.txt
timeout 250 python3 $d/grad_ws.py time 2>&1 | tee $OUT/call1_time.txt
