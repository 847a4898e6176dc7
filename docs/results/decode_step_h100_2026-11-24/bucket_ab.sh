#!/usr/bin/env bash
# Session 30: bucket entry A/B, the embedded-engine GPU tests, and the profile tool's new split.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site:$PWD/.gpu/olddg PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -c "import pytest, xdist" 2>/dev/null || python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site pytest-xdist safetensors tqdm
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for b in local sdpa; do
  timeout 150 python3 .gpu/bucket_ab.py 3 $b 2>&1 | grep -v -i warn | tail -8 | tee -a $OUT/bucket_ab.txt
done
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_embedded_engine.py -k "cuda_graph" 2>&1 | tail -5 | tee $OUT/tests.txt
for a in "--attention-backend local" "--attention-backend sdpa" "--attention-backend local --new-tokens 224"; do
  timeout 120 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 $a 2>&1 | grep "per decode step" | tee -a $OUT/profile.txt
done
