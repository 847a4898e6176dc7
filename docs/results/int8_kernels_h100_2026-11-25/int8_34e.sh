#!/usr/bin/env bash
# Session 34, call 5: the INT8 bench section with the dense tiles, and the INT8 tests.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 100 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py tests/kernels/test_moe_backward.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?" | tee -a $OUT/tests.txt
tail -1 $OUT/tests.txt
cp docs/benchmarks.md $OUT/benchmarks.md
start=$(date +%s)
timeout 240 python3 -m qarl_kernels.bench --only int8 --doc $OUT/benchmarks.md > $OUT/bench_int8.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/bench_int8.txt
grep -E "^\| dense|MISMATCH|Checked" $OUT/bench_int8.txt | tail -12
