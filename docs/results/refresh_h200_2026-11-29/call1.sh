# session 48, call 1 (from the repository root, .whl carried): a model's weights re-quantized
# together after the optimizer step, one host sync for their NaN/inf checks (weight_cache.
# quantize_together): the quantizer, cache and training tests, the step A/B at 2 Qwen3-30B-A3B
# layers; FP8's weight-quantizer check three ways (fp8_check_probe.py)
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
R=docs/results/refresh_h200_2026-11-29
timeout 150 python3 -m pytest -q -n 16 -p no:cacheprovider tests/kernels/test_nonfinite_count.py \
  tests/kernels/test_fp8.py tests/kernels/test_int8.py tests/kernels/test_w4a16_quantize.py \
  tests/megatron/test_cache.py tests/megatron/test_build_and_train.py \
  tests/megatron/test_keep_operand.py 2>&1 | tail -2 | tee $OUT/call1_pytest.txt
timeout 60 python3 $R/fp8_check_probe.py 2>&1 | tee $OUT/call1_fp8_check.txt
timeout 330 python3 $R/refresh_ab.py 6 2 w4a16,fp8-block,int8 2>&1 | grep -v "Warning\|warn" \
  | tee $OUT/call1_refresh_30b.txt
