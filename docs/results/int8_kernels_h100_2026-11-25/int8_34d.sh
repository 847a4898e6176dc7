#!/usr/bin/env bash
# Session 34, call 4: dense INT8 tiles at attention shapes; the tiny example with INT8 rollouts.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 200 python3 .gpu/int8_dense.py > $OUT/dense_tiles.txt 2>&1; echo "dense rc=$?" >> $OUT/dense_tiles.txt
cat $OUT/dense_tiles.txt | tail -16
start=$(date +%s)
SAVE=/tmp/tiny-int8 timeout 330 bash examples/tiny/train.sh gpu --rollout-quant int8 > $OUT/tiny_int8.txt 2>&1
echo "tiny rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tiny_int8.txt
grep -iE "eval|reward|mismatch" $OUT/tiny_int8.txt | tail -12
