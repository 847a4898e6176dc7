#!/usr/bin/env bash
# Session 30: --deterministic-mode on the GPU: the tests, then its cost and effect.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for b in local; do
  timeout 200 python3 .gpu/det_prof.py 2>&1 | grep -E "==|ms \(|Error" | tail -30 | tee -a $OUT/det_prof.txt
done
