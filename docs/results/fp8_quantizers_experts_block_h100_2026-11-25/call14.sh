#!/usr/bin/env bash
# Session 37, call 14: INT8 grouped decode tiles.
# In this folder .gpu/NAME.py is call14_NAME.py; the call ran from the repository root.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 400 python3 .gpu/int8_decode_tiles.py 2>&1 | grep -v "Warn\|capture_end" | tee $OUT/int8_decode_tiles.txt
