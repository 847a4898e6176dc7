#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:$PWD/.gpu/oldk:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 400 python3 .gpu/e64_rule.py 2>&1 | tee $OUT/e64_rule.txt
