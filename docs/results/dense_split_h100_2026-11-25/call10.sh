#!/usr/bin/env bash
# Session 36, call 10: FP8 dense decode sweep (Triton with K split vs scaled_mm vs bf16).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 100 python3 -m pytest -q tests/kernels/test_split_k.py tests/kernels/test_fp8.py tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_fp8_swiglu.py 2>&1 | tail -1
timeout 400 python3 .gpu/fp8_dense.py 2>&1 | grep -v Warn | tee $OUT/fp8_dense.txt; cp /tmp/fp8_sweep.csv $OUT/
