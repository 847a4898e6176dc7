#!/usr/bin/env bash
# Session 36, call 5: bench --only dense (kept column rotated past L2); Megatron-layers step, HEAD kernels vs these.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp /tmp/ppold && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/old/kernels /tmp/ppold/qarl_kernels
cp docs/benchmarks.md /tmp/bench.md
timeout 250 python3 -m qarl_kernels.bench --only dense --doc /tmp/bench.md > $OUT/bench_dense.txt 2>&1; echo "dense rc=$?"; grep -A30 "^### Dense" $OUT/bench_dense.txt | head -26; grep "Checked\|MISMATCH" $OUT/bench_dense.txt
cp /tmp/bench.md $OUT/benchmarks.md
i=0; for mode in new old new old; do i=$((i+1))
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=/tmp/ppold:$PWD:/tmp/site; fi
  PYTHONPATH=$PP timeout 150 python3 tools/bench_megatron_layers.py --steps 6 --warmup 3 --tiny-steps 1 --schemes w4a16,int8 --grouped-bf16 --keep-operand --out $OUT/layers_${mode}$i.json > $OUT/layers_${mode}$i.txt 2>&1
  echo "layers $mode rc=$?"; grep "s/step" $OUT/layers_${mode}$i.txt
done
