#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for c in "3 w4a16" "12 w4a16" "3 none"; do
  timeout 200 python3 .gpu/graph_gaps.py $c 2>&1 | grep -v -i warn | tail -30 | tee -a $OUT/graph_gaps.txt
done
