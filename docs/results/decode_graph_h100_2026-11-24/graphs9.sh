#!/usr/bin/env bash
# Session 26, call 9: the tiny example with --attention-backend sdpa (the fold at decode) and
# the graph: sampler/learner alignment; the 3-layer profile with sdpa.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
ls /tmp/site/megatron >/dev/null 2>&1 || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; mkdir -p /tmp/pp && ln -sf $PWD/kernels /tmp/pp/qarl_kernels; python3 -m pip install -q --no-index --find-links .whl/extra --target /tmp/site safetensors tqdm pytest pytest-xdist; }
O=$OUT; mkdir -p $O/tiny /tmp/r
t0=$(date +%s)
WARM_START=/tmp/r/ws SAVE=/tmp/r/sdpa timeout 220 bash examples/tiny/train.sh gpu --train-iters 60 --rollout-quant w4a16 --aligned-learner --loss tbpo --rollout-routing-replay --attention-backend sdpa > $O/tiny_sdpa.log 2>&1
echo "tiny sdpa rc=$? $(( $(date +%s) - t0 )) s"; cp /tmp/r/sdpa/rl/metrics.jsonl $O/tiny/w4a16-qarl-tbpo-replay-sdpa.jsonl; python3 .gpu/summary.py $O/tiny; grep "reward" $O/tiny_sdpa.log | tail -1
timeout 150 python3 tools/profile_embedded_decode.py --layers 3 --batch 32 --new-tokens 64 --attention-backend sdpa > $O/profile-w4a16-sdpa-fold.txt 2>&1; grep "ms per decode" $O/profile-w4a16-sdpa-fold.txt
