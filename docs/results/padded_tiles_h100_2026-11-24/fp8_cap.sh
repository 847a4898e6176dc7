#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import math_verify" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site math-verify
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 300 python3 .gpu/fp8_cap.py 2>&1 | tee $OUT/fp8_cap.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_routed_rows.py tests/kernels/test_fp8_swiglu.py tests/kernels/test_fp8.py tests/kernels/test_fp8_grouped_ws.py tests/trainer/test_data_and_rewards.py 2>&1 | tail -4 | tee $OUT/tests.txt
