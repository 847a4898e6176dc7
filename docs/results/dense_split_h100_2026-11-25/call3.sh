#!/usr/bin/env bash
# Session 36, call 3: bench sections dense + int8; decode step A/B (HEAD kernels vs split) with attention quantized.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp /tmp/ppold && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/old/kernels /tmp/ppold/qarl_kernels
cp docs/benchmarks.md /tmp/bench.md
timeout 200 python3 -m qarl_kernels.bench --only dense --doc /tmp/bench.md > $OUT/bench_dense.txt 2>&1; echo "dense rc=$?"; grep -A40 "^### Dense" $OUT/bench_dense.txt | head -30; grep "Checked\|MISMATCH" $OUT/bench_dense.txt
timeout 200 python3 -m qarl_kernels.bench --only int8 --doc /tmp/bench.md > $OUT/bench_int8.txt 2>&1; echo "int8 rc=$?"; grep "Checked\|MISMATCH" $OUT/bench_int8.txt
cp /tmp/bench.md $OUT/benchmarks.md
for scheme in int8 w4a16; do for b in 8 64; do for mode in new old; do
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=/tmp/ppold:$PWD:/tmp/site; fi
  PYTHONPATH=$PP timeout 100 python3 tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --scheme $scheme --quant-targets experts+attention --batch $b > $OUT/decode_${scheme}_${mode}_b$b.txt 2>&1
  echo "decode $scheme $mode b=$b rc=$?: $(grep -o 'sdpa attention: .*' $OUT/decode_${scheme}_${mode}_b$b.txt | cut -c17-140)"; grep -o "GPU busy [0-9.]* ms" $OUT/decode_${scheme}_${mode}_b$b.txt
done; done; done
