# session 46, call 5 (from the repository root, .whl carried): the INT8 row quantizer as
# committed (one row a program, 64 bytes a thread, one pass up to 2048 values): its section of
# the benchmark (`bench --only int8`); the GPU suite of the kernels and the Megatron layers
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
cp docs/benchmarks.md $OUT/
timeout 150 python3 -m qarl_kernels.bench --only int8 --doc $OUT/benchmarks.md > $OUT/call5_int8.txt 2>&1
grep "^| grouped\|passed\|FAIL" $OUT/call5_int8.txt
timeout 330 python3 -m pytest -q -n 16 -p no:warnings tests/kernels tests/megatron 2>&1 | tail -4 \
  | tee $OUT/call5_pytest.txt
