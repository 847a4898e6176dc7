#!/usr/bin/env bash
# Session 37, call 3: FP8 row quantizers with one-row programs up to 32 rows: tests, old vs new times, decode step.
# In this folder .gpu/NAME.py is call3_NAME.py; the call ran from the repository root.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp /tmp/ppold && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/old/kernels /tmp/ppold/qarl_kernels
timeout 150 python3 -m pytest -q tests/kernels/test_fp8.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_routed_rows.py tests/kernels/test_fp8_grouped_ws.py tests/megatron/test_token_dispatch.py 2>&1 | tail -2
for mode in old new; do
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=/tmp/ppold:$PWD:/tmp/site; fi
  PYTHONPATH=$PP timeout 120 python3 .gpu/quant_rows.py 2>&1 | grep -v "Warn\|capture_end" | tee $OUT/quant_rows_$mode.txt
done
for b in 8 32; do for mode in old new; do
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=/tmp/ppold:$PWD:/tmp/site; fi
  PYTHONPATH=$PP timeout 90 python3 tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --scheme fp8-block --batch $b > $OUT/decode_fp8_${mode}_b$b.txt 2>&1
  echo "decode fp8 $mode b=$b rc=$?: $(grep -o "attention: [0-9.]* ms per decode step (wall, unprofiled) = a steady step of [0-9.]* ms" $OUT/decode_fp8_${mode}_b$b.txt)"; grep -o "GPU busy [0-9.]* ms" $OUT/decode_fp8_${mode}_b$b.txt
done; done
