#!/usr/bin/env bash
# Session 37, call 5: W4A16 fc1 + SwiGLU fused vs the plain GEMM + the one-pass SwiGLU kernel.
# In this folder .gpu/NAME.py is call5_NAME.py, and kernels/swiglu.py (not kept) is call5_swiglu.py; the call ran from the repository root.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 60 python3 -m pytest -q tests/kernels/test_swiglu.py 2>&1 | tail -1
timeout 420 python3 .gpu/swiglu_split.py 2>&1 | grep -v "Warn\|capture_end" | tee $OUT/swiglu_split.txt
