#!/usr/bin/env bash
# Session 37, call 16: GPU tests of the FP8 tile rule, then --only experts at the final kernels.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 120 python3 -m pytest -q -n 8 -rf tests/kernels/test_fp8.py tests/kernels/test_routed_rows.py tests/kernels/test_swiglu_experts.py tests/kernels/test_fp8_grouped_ws.py tests/megatron/test_token_dispatch.py -p no:cacheprovider 2>&1 | grep -E "^FAILED|passed|failed" | tail -3
cp docs/benchmarks.md /tmp/bench.md
timeout 200 python3 -m qarl_kernels.bench --only experts --doc /tmp/bench.md > $OUT/bench_experts.txt 2>&1; echo "experts rc=$?"; cp /tmp/bench.md $OUT/benchmarks.md
grep -A20 "### Experts block" $OUT/bench_experts.txt | head -20
