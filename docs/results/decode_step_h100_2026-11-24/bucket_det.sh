#!/usr/bin/env bash
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/.gpu/olddg PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for c in "3 local graph" "3 local eager" "3 sdpa graph"; do
  timeout 150 python3 .gpu/bucket_det.py $c 2>&1 | grep "^==" | tee -a $OUT/bucket_det.txt
done
