#!/usr/bin/env bash
# Session 26, call 6: key buckets (attention reads the cache to the next multiple of 256 past
# the window): engine GPU tests, the profile, long responses with sdpa (2048, 4096 tokens).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O
t0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/trainer/test_embedded_engine.py > $O/tests_engine.txt 2>&1
echo "engine tests rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $O/tests_engine.txt; grep -E "^E " $O/tests_engine.txt | head -5
timeout 150 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 > $O/profile-w4a16-cuda-graph-buckets.txt 2>&1; grep "ms per decode" $O/profile-w4a16-cuda-graph-buckets.txt
OUT=$O bash .gpu/long_graphs.sh
