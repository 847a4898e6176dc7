# session 47, call 7 (from the repository root, .whl carried): FP8's weight quantizer counts
# NaN/inf in its pass (kernels/fp8_quantize.py; the check was a torch isfinite pass before):
# the quantizers' tests, finite_check.py, the step A/B (step_ab.py fp8-finite, 2 Qwen3-30B-A3B
# layers), `bench --only quantize`
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/lanes_h200_2026-11-29
timeout 120 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_fp8.py \
  tests/kernels/test_int8.py tests/kernels/test_w4a16_quantize.py tests/kernels/test_routed_rows.py \
  tests/megatron/test_cache.py 2>&1 | tail -2 | tee $OUT/call7_pytest.txt
timeout 60 python3 $R/finite_check.py 2>&1 | tee $OUT/call7_finite.txt
timeout 120 python3 $R/step_ab.py fp8-finite 6 2 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call7_fp8_finite_30b.txt
cp docs/benchmarks.md $OUT/
timeout 120 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md 2>&1 \
  | tee $OUT/call7_quantize.txt | tail -14
