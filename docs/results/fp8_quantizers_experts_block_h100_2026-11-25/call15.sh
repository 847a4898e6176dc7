#!/usr/bin/env bash
# Session 37, call 15: FP8 grouped tiles at E128, 2048-3584 rows.
# In this folder .gpu/NAME.py is call15_NAME.py; the call ran from the repository root.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 300 python3 .gpu/fp8_e128_tiles.py 2>&1 | grep -v "Warn\|capture_end" | tee $OUT/fp8_e128_tiles.txt
