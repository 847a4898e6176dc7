# session 46, call 9 (from the repository root, .whl carried): W4A16 quantize-and-pack with
# 8 rows and one warp a program for fp32 masters (program_shape): its GPU tests, and the
# quantize section of docs/benchmarks.md again
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 90 python3 -m pytest -q -n 8 -p no:warnings tests/kernels/test_w4a16_quantize.py \
  tests/kernels/test_register.py tests/megatron/test_cache.py 2>&1 | tail -2 | tee $OUT/call9_pytest.txt
cp docs/benchmarks.md $OUT/
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md \
  > $OUT/call9_quantize.txt 2>&1; echo rc=$?
grep "^| \|passed\|FAIL" $OUT/call9_quantize.txt
