# session 43, call 5 (from the repository root, .whl carried): the final key (Triton's own
# specialization): host time a call in 5 alternating rounds; the kernel and Megatron tests
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
d=docs/results/ws_wide_h200_2026-11-29
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; git log --oneline -1
timeout 120 python3 $d/launch.py 5 2>&1 | grep -v "^ " | tee $OUT/call5_launch.txt
timeout 400 python3 -m pytest -q -W ignore -p no:cacheprovider -n 14 tests/kernels tests/megatron 2>&1 | tail -6 | tee $OUT/call5_pytest.txt
