# session 45, call 7 (from the repository root, .whl carried; fp8_quantize_sw.py beside this
# script, as e4m3.py says): the FP8 quantizers' e4m3 rounding in hardware (the tree's
# fp8_quantize) against software (4f97b52's): the same bits? the time? Then the GPU tests of
# the FP8 kernels and layers at that tree
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/docs/results/ab_h200_2026-11-29 PYTHONUNBUFFERED=1
pip install -q --no-deps --target /tmp/site .whl/*.whl 2>&1 | grep -v WARNING | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 120 python3 docs/results/ab_h200_2026-11-29/e4m3.py 3 2>&1 | tee $OUT/call7_e4m3.txt
timeout 170 python3 -m pytest -q -n 16 -p no:warnings tests/kernels/test_fp8.py \
  tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_fp8_swiglu.py \
  tests/kernels/test_moe_backward.py tests/kernels/test_routed_rows.py \
  tests/kernels/test_swiglu_experts.py tests/megatron/test_fused_swiglu.py \
  tests/megatron/test_aligned_equals_dequantized.py 2>&1 | tail -3 | tee $OUT/call7_pytest.txt
