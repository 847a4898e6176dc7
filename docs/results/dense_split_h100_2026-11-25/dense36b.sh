#!/usr/bin/env bash
# Session 36, call 2: GPU tests of the split, the full dense sweep against the rules, the dense and int8 bench sections.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q tests/kernels/test_split_k.py tests/kernels/test_int8.py tests/kernels/test_w4a16_gemm.py tests/kernels/test_routed_rows.py tests/kernels/test_swiglu_experts.py 2>&1 | tail -3
timeout 330 python3 .gpu/dense36b.py 2>&1 | grep -v Warning | tee $OUT/dense36b.txt; cp /tmp/sweep.csv $OUT/
