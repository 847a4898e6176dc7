#!/usr/bin/env bash
# Session 35, call 10: the old-logprob pass under a token budget, 3 Qwen3-30B-A3B layers, W4A16 QaRL-TBPO.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for budget in 0 16384 32768; do
  extra=(); [ $budget = 0 ] || extra=(--logprob-max-tokens-per-micro-batch $budget)
  start=$(date +%s)
  QUANT=0 STEPS=3 PROMPTS=64 N=8 NEW_TOKENS=256 MBS=8 TIMEOUT=170 VARIANTS=w4a16-qarl-tbpo \
    examples/qwen3_30b_a3b/bench_reduced.sh $OUT/lp_$budget --attention-backend sdpa "${extra[@]}" > $OUT/lp_$budget.log 2>&1
  echo "== budget $budget rc=$? $(( $(date +%s) - start )) s"
  python3 - $OUT/lp_$budget/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        print(r["step"], {k: round(v, 4) for k, v in r.items() if k in ("time/rollout", "time/old_logprobs", "time/train", "tokens_per_s", "mismatch_abs_log_w_token", "mem/old_logprobs_peak_gib", "mem/train_peak_gib")})
PY
done
