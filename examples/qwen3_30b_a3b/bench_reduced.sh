#!/usr/bin/env bash
# The Qwen3-30B-A3B RL benchmark of docs/benchmarks_30b_reduced.md (one GPU by default): the
# exact Qwen3-30B-A3B layer (hidden 2048, 32/4 heads, head_dim 128, 128 experts top-8, expert
# FFN 768) with LAYERS layers and the full 151936-row embedding/output layer, randomly
# initialised, no warm start, STEPS RL steps of the three variants of train.sh (embedded
# engine) on synthetic arithmetic prompts whose responses run to NEW_TOKENS tokens.
#
#   examples/qwen3_30b_a3b/bench_reduced.sh OUT_DIR [extra trainer flags]
#   NPROC=2 examples/qwen3_30b_a3b/bench_reduced.sh OUT_DIR --tensor-model-parallel-size 2 \
#       --sequence-parallel --expert-model-parallel-size 2 --expert-tensor-parallel-size 1
# The full model on one 8-GPU node, in train.sh's layout (docs/benchmarks_30b_reduced.md):
#   NPROC=8 LAYERS=48 NEW_TOKENS=128 STEPS=2 examples/qwen3_30b_a3b/bench_reduced.sh OUT_DIR \
#       --tensor-model-parallel-size 2 --sequence-parallel --expert-model-parallel-size 8 \
#       --expert-tensor-parallel-size 1 --use-distributed-optimizer
#
# Writes OUT_DIR/{quantize.json, w4a16-qarl-tbpo.jsonl, w4a16-rollout-grpo.jsonl,
# bf16-grpo.jsonl, smi.csv}; each run is cut at TIMEOUT seconds (metrics are flushed per step).
# DEVICE=cpu with small LAYERS/NEW_TOKENS and model overrides checks the command lines;
# QUANT=0 skips the quantize-and-pack timing; VARIANTS picks the runs (also fp8-qarl-tbpo,
# int8-qarl-tbpo, w4a16-rollout-gspo, and bf16-grouped-grpo / bf16-grouped-gspo: the bf16
# baselines with --moe-grouped-gemm; the paper's MoE baselines are the GSPO ones).
# w4a16-rollout-* trains a bf16 learner through Megatron's SequentialMLP unless
# --moe-grouped-gemm is passed (quantized experts are always grouped).
set -uo pipefail
OUT=${1:?usage: $0 OUT_DIR [extra trainer flags]}; shift
LAYERS=${LAYERS:-3}; NEW_TOKENS=${NEW_TOKENS:-512}; STEPS=${STEPS:-3}
PROMPTS=${PROMPTS:-8}; N=${N:-4}; MBS=${MBS:-4}; TIMEOUT=${TIMEOUT:-150}
DEVICE=${DEVICE:-cuda}; NPROC=${NPROC:-1}; VARIANTS=${VARIANTS:-w4a16-qarl-tbpo w4a16-rollout-grpo bf16-grpo}
PROMPT_FILE=${PROMPT_FILE:-/tmp/bench_reduced_prompts.jsonl}
BF16=(--bf16); [ "$DEVICE" = cpu ] && BF16=()  # Megatron's bf16 optimizer needs CUDA
LAUNCH=(python3); [ "$NPROC" -gt 1 ] && LAUNCH=(torchrun --standalone --nproc-per-node "$NPROC")
# Megatron pads the vocabulary to a multiple of the divisor x TP: 151936 / TP keeps 151936 rows
TP=1; prev=
for arg in "$@"; do [ "$prev" = --tensor-model-parallel-size ] && TP=$arg; prev=$arg; done
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PYTHONUNBUFFERED=1

# 256 synthetic prompts "a+b=" with 8-digit a, b (the char tokenizer's alphabet).
python3 - "$PROMPT_FILE" <<'EOF'
import json, random, sys
rng = random.Random(0)
with open(sys.argv[1], "w") as f:
    for _ in range(256):
        a, b = rng.randrange(10**7, 10**8), rng.randrange(10**7, 10**8)
        f.write(json.dumps({"prompt": f"{a}+{b}=", "answer": str(a + b)}) + "\n")
EOF

if [ "$DEVICE" = cuda ] && [ "${QUANT:-1}" = 1 ]; then
  echo "=== quantize-and-pack, one layer's experts: $(date -u +%FT%TZ)"
  timeout 120 python3 tools/bench_rl_phases.py quantize --layers 48 --json "$OUT/quantize.json"
fi

for variant in $VARIANTS; do
  case "$variant" in
    w4a16-qarl-tbpo)    RL=(--rollout-quant w4a16 --aligned-learner --loss tbpo) ;;
    fp8-qarl-tbpo)      RL=(--rollout-quant fp8-block --aligned-learner --loss tbpo) ;;
    int8-qarl-tbpo)     RL=(--rollout-quant int8 --aligned-learner --loss tbpo) ;;
    bf16-grpo)          RL=(--rollout-quant none --loss grpo --mismatch-correction tis) ;;
    bf16-grouped-grpo|bf16-grouped-gspo)
                        RL=(--rollout-quant none --loss "${variant#bf16-grouped-}"
                            --mismatch-correction tis --moe-grouped-gemm) ;;
    w4a16-rollout-grpo|w4a16-rollout-gspo)
                        RL=(--rollout-quant w4a16 --no-aligned-learner
                            --loss "${variant#w4a16-rollout-}" --mismatch-correction tis) ;;
    *) echo "unknown variant $variant" >&2; exit 2 ;;
  esac
  case "$variant" in *gspo) RL+=(--loss-agg-mode seq-mean-token-mean) ;; esac  # GSPO's own mean
  SMI=
  if [ "$DEVICE" = cuda ] && command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,timestamp,memory.used --format=csv,noheader -lms 500 \
      | sed -u "s/^/$variant, /" >>"$OUT/smi.csv" &
    SMI=$!
  fi
  echo "=== $variant: start $(date -u +%FT%TZ)"
  timeout -s INT -k 15 "$TIMEOUT" "${LAUNCH[@]}" tools/bench_rl_phases.py train \
    --device "$DEVICE" ${BF16[@]+"${BF16[@]}"} --model qwen3-30b-a3b --num-layers "$LAYERS" \
    --make-vocab-size-divisible-by $((151936 / TP)) --rollout-engine embedded \
    --optimizer adam --lr 1e-6 --clip-grad 1.0 \
    --prompt-data "$PROMPT_FILE" --reward arithmetic --tokenizer-type char \
    --prompt-template plain \
    --seq-length $((NEW_TOKENS + 32)) --rollout-max-new-tokens "$NEW_TOKENS" \
    --rollout-temperature 1.0 --rollout-batch-size "$PROMPTS" --n-samples-per-prompt "$N" \
    --global-batch-size $((PROMPTS * N)) --micro-batch-size "$MBS" \
    "${RL[@]}" --quant-targets experts \
    --sft-iters 0 --train-iters "$STEPS" --eval-interval 0 \
    --metrics-path "$OUT/$variant.jsonl" --no-progress-bar "$@"
  echo "=== $variant: exit $? at $(date -u +%FT%TZ)"
  [ -n "$SMI" ] && kill "$SMI" 2>/dev/null
done
exit 0
