#!/usr/bin/env bash
# Session 37, call 4: benchmarks.md's --only experts and --only dense sections at 3bb9489 (FP8 one-row quantizer programs).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
cp docs/benchmarks.md /tmp/bench.md
timeout 260 python3 -m qarl_kernels.bench --only experts --doc /tmp/bench.md > $OUT/bench_experts.txt 2>&1; echo "experts rc=$?"
timeout 300 python3 -m qarl_kernels.bench --only dense --doc /tmp/bench.md > $OUT/bench_dense.txt 2>&1; echo "dense rc=$?"
cp /tmp/bench.md $OUT/benchmarks.md
grep -A30 "### FP8 block dense" $OUT/bench_dense.txt | head -26; grep -A20 "### Experts block" $OUT/bench_experts.txt | head -20; grep -h "Checked against" $OUT/*.txt
