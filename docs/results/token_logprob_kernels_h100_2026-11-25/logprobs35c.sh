#!/usr/bin/env bash
# Session 35, call 3: learner bits with contiguous rows, the sampler bench section, RL A/B (3 layers).
set -uo pipefail
export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, loguru, compressed_tensors, megatron.core, emerging_optimizers, math_verify, xdist" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/kernels/test_token_logprobs_kernel.py > $OUT/tests.txt 2>&1; echo "pytest rc=$?"; tail -1 $OUT/tests.txt
timeout 100 python3 .gpu/logprob_learner.py $OUT > $OUT/logprob_learner.txt 2>&1; echo "learner rc=$?"
grep -E '^ "(logprob|entropy|grad|engine)|^kernel|^chunked' $OUT/logprob_learner.txt
cp docs/benchmarks.md $OUT/benchmarks.md
timeout 150 python3 -m qarl_kernels.bench --only sampler --doc $OUT/benchmarks.md > $OUT/bench_sampler.txt 2>&1
echo "bench rc=$?"; grep -E "^\| [0-9]|MISMATCH|Checked|Error" $OUT/bench_sampler.txt | tail -14
for which in old new; do
  if [ $which = old ]; then PP=$PWD/.gpu/nolp:$PYTHONPATH; else PP=$PYTHONPATH; fi
  start=$(date +%s)
  PYTHONPATH=$PP QUANT=0 STEPS=3 PROMPTS=64 N=8 NEW_TOKENS=256 MBS=8 TIMEOUT=170 VARIANTS=w4a16-qarl-tbpo \
    examples/qwen3_30b_a3b/bench_reduced.sh $OUT/rl_$which --attention-backend sdpa > $OUT/rl_$which.log 2>&1
  echo "== rl $which rc=$? $(( $(date +%s) - start )) s"
  python3 - $OUT/rl_$which/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        print(r["step"], {k: round(v, 4) for k, v in r.items() if k in ("time/rollout", "time/old_logprobs", "time/train", "tokens_per_s", "mismatch_abs_log_w_token", "mem/train_peak_gib", "mem/old_logprobs_peak_gib")})
PY
done
