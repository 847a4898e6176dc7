#!/usr/bin/env bash
# Session 36, call 9: bench --only dense with the FP8 dense decode table.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 60 python3 -m pytest -q tests/kernels/test_fp8.py 2>&1 | tail -1
cp docs/benchmarks.md /tmp/bench.md
timeout 300 python3 -m qarl_kernels.bench --only dense --doc /tmp/bench.md > $OUT/bench_dense.txt 2>&1; echo "dense rc=$?"; grep -A22 "^### FP8 block dense" $OUT/bench_dense.txt; grep "Checked\|MISMATCH" $OUT/bench_dense.txt | head -3; tail -3 $OUT/bench_dense.txt
cp /tmp/bench.md $OUT/benchmarks.md
