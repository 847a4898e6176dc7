# Call 3 (nvidia-h200): after the FP8 activation spec took sgl-kernel SM90's arithmetic:
# the probe again (part 3's last rows should show no difference), the GPU tests of the FP8
# quantizers and layers, the quantizers' time before/after (quantizer_ab.py; the kernels before:
# the commit before the change, put in the tree as kernels/fp8_quantize_before.py by
# `git show 50f9e6b:kernels/fp8_quantize.py > kernels/fp8_quantize_before.py`, not committed),
# then the bench's FP8 section.
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1 D=docs/results/sglang_fp8_fast_math_h200_2026-12-01
pip install -q --no-deps --target /tmp/site .whl/*.whl .whl/rewards/*.whl .whl/test/*.whl 2>&1 | tail -1
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
timeout 60 python3 $D/probe.py 2>&1 | grep -v -i warn | tee $OUT/call3_probe.txt
timeout 180 python -m pytest -q -rf -n 16 -p no:cacheprovider tests/kernels/test_sgl_kernel_fp8_codes.py \
  tests/kernels/test_fp8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_div_by_reciprocal.py \
  tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_routed_rows.py tests/quant \
  tests/megatron/test_te_fp8.py 2>&1 | tail -8 | tee $OUT/call3_tests.txt
timeout 120 python3 $D/quantizer_ab.py 2>&1 | grep -v -i warn | tee $OUT/call3_quantizer_ab.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 200 python -m qarl_kernels.bench --only fp8 --doc $OUT/benchmarks.md 2>&1 | grep -v -i warn \
  | tail -60 > $OUT/call3_bench_fp8.txt
