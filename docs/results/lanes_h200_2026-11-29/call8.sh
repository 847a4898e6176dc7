# session 47, call 8 (from the repository root, .whl carried): FP8's weight quantizer finds
# NaN/inf in its amax (NaN taken as inf), one reduction (call 7's count of the values, a second
# reduction, took 1.34x the kernel's time): its and its neighbours' tests, finite_check.py,
# `bench --only quantize`
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/lanes_h200_2026-11-29
timeout 150 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_fp8.py \
  tests/kernels/test_fp8_swiglu.py tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_int8.py \
  tests/kernels/test_w4a16_quantize.py tests/kernels/test_routed_rows.py tests/megatron/test_cache.py \
  tests/megatron/test_build_and_train.py 2>&1 | tail -2 | tee $OUT/call8_pytest.txt
timeout 60 python3 $R/finite_check.py 2>&1 | tee $OUT/call8_finite.txt
cp docs/benchmarks.md $OUT/
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | tee $OUT/call8_quantize.txt | tail -14
