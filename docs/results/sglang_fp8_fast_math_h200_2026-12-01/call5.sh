# Call 5 (nvidia-h200): the quantizers of bf16 values take rcp.approx.ftz.f32 itself on the GPU
# (the table gather cost 0.1-0.2 us at 1-256 rows in call 4): the FP8 GPU tests, quantizer_ab.py
# (kernels/fp8_quantize_before.py = 50f9e6b's, in the tree, not committed), the bench's FP8 section.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1 D=docs/results/sglang_fp8_fast_math_h200_2026-12-01
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 180 python -m pytest -q -rf -n 16 -p no:cacheprovider tests/kernels/test_sgl_kernel_fp8_codes.py \
  tests/kernels/test_fp8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_div_by_reciprocal.py \
  tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_routed_rows.py tests/quant \
  tests/megatron/test_te_fp8.py 2>&1 | tail -3 | tee $OUT/call5_tests.txt
timeout 120 python3 $D/quantizer_ab.py 2>&1 | grep -v -i warn | tee $OUT/call5_quantizer_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 240 python -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md 2>&1 | grep -v -i warn \
  | tail -60 > $OUT/call5_bench_fp8.txt
