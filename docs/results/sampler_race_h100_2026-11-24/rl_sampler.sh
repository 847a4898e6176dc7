export PYTHONPATH=/tmp/pp:$PWD:/tmp/site PYTHONUNBUFFERED=1
python3 -c "import pydantic, megatron.core" 2>/dev/null || pip install -q --no-deps --upgrade --target /tmp/site .whl/*.whl .whl/extra/*.whl .whl/ct/*.whl .whl/eo/*.whl 2>&1 | tail -2
mkdir -p /tmp/pp && ln -sfn $PWD/kernels /tmp/pp/qarl_kernels
for which in reference kernel; do
  if [ $which = reference ]; then PP=$PWD/.gpu/refsc:$PYTHONPATH; else PP=$PYTHONPATH; fi
  PYTHONPATH=$PP QUANT=0 STEPS=3 PROMPTS=64 N=8 NEW_TOKENS=256 MBS=8 TIMEOUT=200 VARIANTS=w4a16-qarl-tbpo \
    examples/qwen3_30b_a3b/bench_reduced.sh $OUT/$which --attention-backend sdpa > $OUT/$which.log 2>&1
  echo "== $which"
  python3 - $OUT/$which/w4a16-qarl-tbpo.jsonl <<'PY'
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if r.get("event") == "train":
        print(r["step"], {k: round(v, 3) for k, v in r.items() if k in ("time/rollout", "time/old_logprobs", "time/train", "tokens_per_s", "mismatch_abs_log_w_token", "response_length_mean")})
PY
done
