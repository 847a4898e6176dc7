#!/usr/bin/env bash
# Session 34, call 12: INT8 tokens quantized before the MoE dispatch (packed rows) on the GPU.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider tests/kernels/test_int8.py tests/kernels/test_fp8.py tests/kernels/test_register.py tests/kernels/test_swiglu_experts.py tests/megatron/test_token_dispatch.py tests/trainer/test_embedded_engine.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?" | tee -a $OUT/tests.txt
grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -8
start=$(date +%s)
SAVE=/tmp/tiny-int8 timeout 200 bash examples/tiny/train.sh gpu --rollout-quant int8 > $OUT/tiny_int8.txt 2>&1
echo "tiny rc=$? $(( $(date +%s) - start )) s" | tee -a $OUT/tiny_int8.txt
grep -E "reward \(greedy|decode steps" $OUT/tiny_int8.txt | tail -4
tr '\r' '\n' < $OUT/tiny_int8.txt | grep -o "mismatch_abs_log_w_token=[^ ]*" | sort | uniq -c
