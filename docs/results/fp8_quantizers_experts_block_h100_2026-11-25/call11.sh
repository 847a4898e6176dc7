#!/usr/bin/env bash
# Session 37, call 11: FP8 decode tiles: GPU tests, TP2 old/new, --only experts, the decode step old/new.
# In this folder .gpu/NAME.py is call11_NAME.py; .gpu/old/kernels is `git archive 7ff98ca kernels`; the call ran from the repository root.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp /tmp/ppold && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels && ln -sfn $PWD/.gpu/old/kernels /tmp/ppold/qarl_kernels
timeout 150 python3 -m pytest -q -n 8 tests/kernels/test_fp8.py tests/kernels/test_routed_rows.py tests/kernels/test_swiglu_experts.py tests/kernels/test_fp8_grouped_ws.py tests/kernels/test_fp8_swiglu.py tests/megatron/test_token_dispatch.py -p no:cacheprovider 2>&1 | tail -1
timeout 100 python3 .gpu/fp8_tp2.py 2>&1 | grep -v "Warn\|capture_end" | tee $OUT/fp8_tp2.txt
cp docs/benchmarks.md /tmp/bench.md
timeout 200 python3 -m qarl_kernels.bench --only experts --doc /tmp/bench.md > $OUT/bench_experts.txt 2>&1; echo "experts rc=$?"; cp /tmp/bench.md $OUT/benchmarks.md
grep -A20 "### Experts block" $OUT/bench_experts.txt | head -20
for b in 8 64; do for mode in old new; do
  if [ $mode = new ]; then PP=$PYTHONPATH; else PP=/tmp/ppold:$PWD:/tmp/site; fi
  PYTHONPATH=$PP timeout 80 python3 tools/profile_embedded_decode.py --layers 3 --new-tokens 64 --attention-backend sdpa --scheme fp8-block --batch $b > $OUT/decode_fp8_${mode}_b$b.txt 2>&1
  echo "decode fp8 $mode b=$b rc=$?: $(grep -o "attention: [0-9.]* ms per decode step (wall, unprofiled) = a steady step of [0-9.]* ms" $OUT/decode_fp8_${mode}_b$b.txt)"; grep -o "GPU busy [0-9.]* ms" $OUT/decode_fp8_${mode}_b$b.txt
done; done
