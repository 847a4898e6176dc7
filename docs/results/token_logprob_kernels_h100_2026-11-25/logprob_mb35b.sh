#!/usr/bin/env bash
# Session 35, call 11: bf16 logits from Float16Module; old-logprob token budgets; tiny example; tests.
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 120 python3 -m pytest -q -n 8 -p no:cacheprovider tests/trainer/test_embedded_engine.py tests/trainer/test_sampler_learner_logprobs.py tests/trainer/test_deterministic_mode.py tests/trainer/test_parallel_decode_graph.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?"; grep -E "^(FAILED|ERROR)|passed|failed" $OUT/tests.txt | tail -6
for budget in 0 16384 32768; do
  extra=(); [ $budget = 0 ] || extra=(--logprob-max-tokens-per-micro-batch $budget)
  start=$(date +%s)
  QUANT=0 STEPS=3 PROMPTS=64 N=8 NEW_TOKENS=256 MBS=8 TIMEOUT=120 VARIANTS=w4a16-qarl-tbpo \
    examples/qwen3_30b_a3b/bench_reduced.sh $OUT/lp_$budget --attention-backend sdpa "${extra[@]}" > $OUT/lp_$budget.log 2>&1
  echo "== budget $budget rc=$? $(( $(date +%s) - start )) s"
  python3 - $OUT/lp_$budget/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        print(r["step"], {k: round(v, 4) for k, v in r.items() if k in ("time/rollout", "time/old_logprobs", "time/train", "tokens_per_s", "mismatch_abs_log_w_token", "mem/old_logprobs_peak_gib", "mem/train_peak_gib")})
PY
done
start=$(date +%s)
SAVE=/tmp/tiny-bf16logits timeout 200 bash examples/tiny/train.sh gpu > $OUT/tiny.log 2>&1
echo "tiny rc=$? $(( $(date +%s) - start )) s"
grep -E "reward \(greedy" $OUT/tiny.log | tail -2
tr '\r' '\n' < $OUT/tiny.log | grep -o "mismatch_abs_log_w_token=[^ ]*" | sort | uniq -c
