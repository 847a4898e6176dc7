# session 48, call 2 (from the repository root, .whl carried): FP8's weight quantizer with the
# NaN/inf carried into its scales: its tests and the cache's, finite_check.py (the learner's
# checked call), `bench --only quantize`; the refresh A/B again, two A B B A sets of 16 steps
# at 2 Qwen3-30B-A3B layers, and W4A16 at qwen3-moe-200m
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/refresh_h200_2026-11-29
timeout 150 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_nonfinite_count.py \
  tests/kernels/test_fp8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_register.py \
  tests/megatron/test_cache.py tests/megatron/test_build_and_train.py 2>&1 | tail -2 \
  | tee $OUT/call2_pytest.txt
timeout 60 python3 docs/results/lanes_h200_2026-11-29/finite_check.py 2>&1 | tee $OUT/call2_finite.txt
cp docs/benchmarks.md $OUT/
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | tee $OUT/call2_quantize.txt | tail -14
for run in 1 2; do
  timeout 150 python3 $R/refresh_ab.py 16 2 w4a16,fp8-block,int8 2>&1 | grep -v "Warning\|warn" \
    | tee -a $OUT/call2_refresh_30b.txt
done
timeout 120 python3 $R/refresh_ab.py 6 0 w4a16 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call2_refresh_200m.txt
