#!/usr/bin/env bash
# Session 30: --deterministic-mode on the GPU: the tests, then its cost and effect.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import pytest, xdist" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest-xdist safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 240 python3 -m pytest -q -p no:cacheprovider -n 3 tests/trainer/test_deterministic_mode.py tests/kernels/test_w4a16_gemm.py tests/trainer/test_embedded_engine.py 2>&1 | grep -E "passed|failed|FAILED|Error" | tail -8 | tee $OUT/tests.txt
for b in local sdpa; do
  timeout 200 python3 .gpu/det_gpu.py $b 2>&1 | grep -E "deterministic=|Error|error" | tail -8 | tee -a $OUT/det_gpu.txt
done
