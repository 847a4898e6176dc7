#!/usr/bin/env bash
# Session 34, call 1: the INT8 kernels compiled on the GPU (their tests, bit for bit), then the tile sweep.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" | tee -a $OUT/gpu.txt
start=$(date +%s)
timeout 200 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py tests/kernels/test_moe_backward.py tests/kernels/test_register.py tests/quant/test_fp8_int8.py tests/quant/test_ste.py tests/megatron -k "int8 or register or backward or fp8_int8" > $OUT/tests.txt 2>&1
echo "pytest rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -15
start=$(date +%s)
timeout 330 python3 -m qarl_kernels.tune --only int8 > $OUT/tune_int8.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tune_int8.txt
grep -E "^INT8|WRONG|skipped" $OUT/tune_int8.txt | head -40
