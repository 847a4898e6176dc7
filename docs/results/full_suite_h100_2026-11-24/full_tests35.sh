#!/usr/bin/env bash
# Session 35: the whole test suite on one GPU at HEAD (compressed-tensors, math-verify, emerging-optimizers carried).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton, transformers, compressed_tensors, megatron.core as m; print(torch.__version__, triton.__version__, transformers.__version__, compressed_tensors.__version__, m.__version__)" 2>&1 | tee -a $OUT/gpu.txt
start=$(date +%s)
timeout 540 python3 -m pytest -q -n 8 -rs -p no:cacheprovider tests > $OUT/gpu_tests.txt 2>&1
echo "pytest rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/gpu_tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/gpu_tests.txt | tail -25
git log -1 --format=%h 2>/dev/null | tee -a $OUT/gpu.txt
