#!/usr/bin/env bash
# Session 36, call 11: FP8 dense decode through the split Triton kernel: tests, bench --only dense.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 -m pytest -q -n 8 tests/kernels tests/megatron 2>&1 | tail -1
cp docs/benchmarks.md /tmp/bench.md
timeout 300 python3 -m qarl_kernels.bench --only dense --doc /tmp/bench.md > $OUT/bench_dense.txt 2>&1; echo "dense rc=$?"; grep -A24 "^### FP8 block dense" $OUT/bench_dense.txt; grep "Checked\|MISMATCH" $OUT/bench_dense.txt | head -3
cp /tmp/bench.md $OUT/benchmarks.md
