#!/usr/bin/env bash
# Session 34, call 10: the INT8 weight quantizer (per-step refresh) on the GPU, and the quantize section.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py tests/kernels/test_register.py tests/kernels/test_swiglu_experts.py tests/megatron tests/quant -k "int8 or register or swiglu or cache" > $OUT/tests.txt 2>&1; echo "pytest rc=$?" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -8
cp docs/benchmarks.md $OUT/benchmarks.md
start=$(date +%s)
timeout 200 python3 -m qarl_kernels.bench --only quantize --doc $OUT/benchmarks.md > $OUT/bench_quantize.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/bench_quantize.txt
grep -E "^\||MISMATCH|Checked" $OUT/bench_quantize.txt | tail -12
