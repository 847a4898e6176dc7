#!/usr/bin/env bash
# Session 37, call 1: GPU tests of the changed files, the FP8 fused-quantizer sweep, the experts block bench.
# In this folder .gpu/NAME.py is call1_NAME.py; the call ran from the repository root.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git log --oneline -1 2>/dev/null
timeout 120 python3 -m pytest -q tests/kernels/test_split_k.py tests/kernels/test_fp8.py 2>&1 | tail -2
timeout 230 python3 .gpu/fp8_fused.py (call1_fp8_fused.py here) 2>&1 | grep -v Warn | tee $OUT/fp8_fused.txt; cp /tmp/fp8_fused.csv $OUT/
cp docs/benchmarks.md /tmp/bench.md
timeout 220 python3 -m qarl_kernels.bench --only experts --doc /tmp/bench.md > $OUT/bench_experts.txt 2>&1; echo "bench rc=$?"
tail -30 $OUT/bench_experts.txt
