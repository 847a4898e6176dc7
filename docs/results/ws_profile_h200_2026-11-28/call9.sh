# session 41, call 9 (from the repository root): the routing test at the final rule (160-2047
# rows per expert) and the WS kernel's tests
export PYTHONPATH=/tmp/pp:$PWD PYTHONUNBUFFERED=1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 200 python3 -m pytest -q -W ignore -p no:cacheprovider -n 8 \
  tests/kernels/test_w4a16_grouped_ws.py tests/kernels/test_w4a16_operand.py \
  tests/kernels/test_w4a16_gemm.py 2>&1 | tee $OUT/pytest.txt | tail -3
