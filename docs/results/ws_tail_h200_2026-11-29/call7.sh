# session 44, call 7 (from the repository root, .whl carried): grad_input's kernel without the
# short tiles' m64 blocks from 320 rows an expert (SHORT_TILES): the WS kernel's and the
# backward's tests; tail.py's large set (512-1024 rows an expert, where calls 2-6 found grad_input
# 1.01-1.05x the kernel before)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_moe_backward.py 2>&1 | tail -3 | tee $OUT/call7_pytest.txt
timeout 150 python3 $d/tail.py 3 large 2>&1 | tee $OUT/call7_large.txt
