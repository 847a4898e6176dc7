#!/usr/bin/env bash
# Session 35, call 12: decode step with bf16 logits (e714291), batch 32 and 256, kernels vs torch path.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for b in 256 32; do for mode in new old; do
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=$PWD/.gpu/nolp:$PYTHONPATH; fi
  PYTHONPATH=$PP timeout 100 python3 tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --batch $b > $OUT/decode_${mode}_b$b.txt 2>&1
  echo "decode $mode b=$b rc=$?: $(grep -o 'sdpa attention: .*' $OUT/decode_${mode}_b$b.txt | cut -c17-120)"; grep -o "GPU busy [0-9.]* ms" $OUT/decode_${mode}_b$b.txt
done; done
