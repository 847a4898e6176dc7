#!/usr/bin/env bash
# The tiny example on the GPU after the chunked token log-probabilities: QaRL-TBPO + routing replay,
# 60 steps (compare docs/results/routing_replay_gpu_2026-11-23: mean 2.37e-6, 5 steps nonzero).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
O=$OUT/tiny; mkdir -p $O /tmp/r
t0=$(date +%s)
WARM_START=/tmp/r/ws SAVE=/tmp/r/qarl-replay bash examples/tiny/train.sh gpu --train-iters 60 --rollout-quant w4a16 --aligned-learner --loss tbpo --rollout-routing-replay > $O/qarl-replay.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s" | tee $O/wall.txt
cp /tmp/r/qarl-replay/rl/metrics.jsonl $O/w4a16-qarl-tbpo-replay.jsonl
python3 .gpu/summary.py $O | tee $O/summary.txt
python3 - $O <<'PY'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1] + "/w4a16-qarl-tbpo-replay.jsonl")]
tr = [r for r in rows if r["event"] == "train"]
print("entropy first/last", tr[0]["entropy"], tr[-1]["entropy"], "train s median", statistics.median(r["time/train"] for r in tr))
PY
