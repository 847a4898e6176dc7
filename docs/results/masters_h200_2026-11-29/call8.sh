# session 51, call 8 (.whl carried): the FP8 weight quantizer walking along each row of blocks
# against one block a program (fp8_walk_probe.py), and the FP8 tests
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 60 python3 docs/results/masters_h200_2026-11-29/fp8_walk_probe.py 2>&1 \
  | grep -v "Warning\|warn" | tee $OUT/call8_walk.txt
timeout 40 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_fp8.py \
  tests/kernels/test_expert_masters.py 2>&1 | tail -2 | tee $OUT/call8_pytest.txt
