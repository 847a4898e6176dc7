#!/usr/bin/env bash
# Session 36, call 1: split-K dense decode sweep (INT8, W4A16) + GPU tests of the split.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 150 python3 -m pytest -q -x tests/kernels/test_split_k.py tests/kernels/test_int8.py tests/kernels/test_w4a16_gemm.py tests/kernels/test_routed_rows.py 2>&1 | tail -3
timeout 380 python3 .gpu/dense36.py 2>&1 | grep -v Warning | tee $OUT/dense36.txt
