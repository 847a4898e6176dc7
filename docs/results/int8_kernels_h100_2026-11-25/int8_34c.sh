#!/usr/bin/env bash
# Session 34, call 3: INT8 tests on the GPU, its bench section, the Megatron-layer step times.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
start=$(date +%s)
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py tests/kernels/test_moe_backward.py tests/kernels/test_register.py tests/quant/test_fp8_int8.py tests/quant/test_ste.py tests/megatron -k "int8 or register or backward or fp8_int8" > $OUT/tests.txt 2>&1
echo "pytest rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -8
cp docs/benchmarks.md $OUT/benchmarks.md
start=$(date +%s)
timeout 220 python3 -m qarl_kernels.bench --only int8 --doc $OUT/benchmarks.md > $OUT/bench_int8.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/bench_int8.txt
grep -E "^\||MISMATCH|Checked" $OUT/bench_int8.txt | tail -32
start=$(date +%s)
timeout 200 python3 tools/bench_megatron_layers.py --steps 4 --warmup 3 --tiny-steps 8 --schemes none,w4a16,fp8-block,int8 --grouped-bf16 --out $OUT/megatron_layers.json > $OUT/megatron_layers.txt 2>&1
echo "layers rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/megatron_layers.txt
tail -25 $OUT/megatron_layers.txt
