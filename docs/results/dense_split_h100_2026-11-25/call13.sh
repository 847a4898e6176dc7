#!/usr/bin/env bash
# Session 36, call 13: FP8 decode step with attention quantized, f90cbe8's kernels (FP8 dense via scaled_mm) vs 5bfc53f's.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp /tmp/ppold && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/old5/kernels /tmp/ppold/qarl_kernels
for b in 8 32; do for mode in new old; do
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=/tmp/ppold:$PWD:/tmp/site; fi
  PYTHONPATH=$PP timeout 100 python3 tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --scheme fp8-block --quant-targets experts+attention --batch $b > $OUT/decode_fp8_${mode}_b$b.txt 2>&1
  echo "decode fp8 $mode b=$b rc=$?: $(grep -o 'sdpa attention: .*' $OUT/decode_fp8_${mode}_b$b.txt | cut -c17-140)"; grep -o "GPU busy [0-9.]* ms" $OUT/decode_fp8_${mode}_b$b.txt
done; done
