# session 44, call 5 (from the repository root, .whl carried): the final kernel's GPU tests
# again with time to finish (call 4's stopped at its 200 s limit); tail.py's E128 / TP2 set
# against the kernel before
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_tail_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 330 python3 -m pytest -q -W ignore -p no:cacheprovider -n 16 tests/kernels tests/megatron 2>&1 | tail -4 | tee $OUT/call5_pytest.txt
timeout 200 python3 $d/tail.py 3 e128 2>&1 | tee $OUT/call5_e128.txt
