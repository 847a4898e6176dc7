#!/usr/bin/env bash
# Session 31: the routed-sum MoE combine on the GPU: tests, the bench table, Megatron's combine A/B.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import pytest, xdist, safetensors, tqdm" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest-xdist safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -n 4 tests/kernels/test_routed_sum.py tests/kernels/test_register.py tests/trainer/test_deterministic_mode.py tests/megatron/test_token_combine.py tests/trainer/test_embedded_engine.py 2>&1 | grep -E "passed|failed|FAILED|Error" | tail -12 | tee $OUT/tests.txt
timeout 120 python3 -m qarl_kernels.bench --only combine --doc $OUT/bench_combine.md 2>&1 | grep -v Warn | tail -14 | tee $OUT/bench_combine.txt
for b in sdpa local; do
  timeout 150 python3 .gpu/combine_ab.py $b 2>&1 | grep -E "combine=|Error|error" | tail -10 | tee -a $OUT/combine_ab.txt
done
