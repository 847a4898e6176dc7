# session 46, call 4 (from the repository root, .whl carried): the INT8 row quantizer with rows
# a program x warps, one pass for rows of up to 2048 values (int8_tiles.py); its GPU tests
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 100 python3 -m pytest -q -n 8 -p no:warnings tests/kernels/test_int8.py \
  tests/kernels/test_swiglu_experts.py 2>&1 | tail -3 | tee $OUT/call4_pytest.txt
timeout 300 python3 docs/results/layers_h200_2026-11-29/int8_tiles.py 2>&1 | tee $OUT/call4_tiles.txt
