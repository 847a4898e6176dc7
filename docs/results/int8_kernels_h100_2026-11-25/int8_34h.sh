#!/usr/bin/env bash
# Session 34, call 11: 3 Qwen3-30B-A3B layers on one H100, INT8 QaRL-TBPO against W4A16 QaRL-TBPO.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
QUANT=0 STEPS=3 TIMEOUT=130 VARIANTS="int8-qarl-tbpo w4a16-qarl-tbpo" bash examples/qwen3_30b_a3b/bench_reduced.sh $OUT/reduced > $OUT/reduced.log 2>&1
grep "===" $OUT/reduced.log
python3 .gpu/summ.py $OUT/reduced/int8-qarl-tbpo.jsonl $OUT/reduced/w4a16-qarl-tbpo.jsonl
