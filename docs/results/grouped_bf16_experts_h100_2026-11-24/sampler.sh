#!/usr/bin/env bash
# Session 29: the exponential-race sampler on the GPU: the engine tests (graphed and eager
# decoding bit for bit), then the decode-step profiles of grouped_a.sh again.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm math-verify pytest-xdist; }
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python3 -m pytest -q -n 4 -p no:cacheprovider tests/trainer/test_embedded_engine.py tests/trainer/test_sampling.py 2>&1 | tail -2 | tee $OUT/tests.txt
P="python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64"
for v in "w4a16" "none --moe-grouped-gemm" "w4a16" "none --moe-grouped-gemm"; do
  echo "=== --scheme $v" >> $OUT/profiles.txt
  timeout 100 $P --scheme $v 2>&1 | grep -v -i "warn" | tail -40 >> $OUT/profiles.txt
  grep "per decode step" $OUT/profiles.txt | tail -1
done
