#!/usr/bin/env bash
# The three-way comparison on the tiny example, same seeds, one shared warm start:
#   bf16-grpo           bf16 rollouts and learner, GRPO with TIS
#   w4a16-rollout-grpo  W4A16 rollouts, bf16 learner, GRPO with TIS (the quantized-rollout baseline)
#   w4a16-qarl-tbpo     W4A16 rollouts, aligned W4A16 learner, TBPO (QaRL)
# The baselines take truncated importance sampling (--mismatch-correction tis) as the paper's
# do (its section 4: "GRPO with TIS for the BF16 RL baseline and quantized training").
#
#   examples/tiny/compare.sh gpu|cpu OUT_DIR [extra flags for every variant]
set -euo pipefail
DEVICE=${1:?cpu|gpu}; OUT=${2:?output folder}; shift 2
HERE=$(dirname "$0")
export WARM_START="$OUT/warm-start"

for variant in bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo; do
  case "$variant" in
    bf16-grpo)          RL=(--rollout-quant none --loss grpo --mismatch-correction tis) ;;
    w4a16-rollout-grpo) RL=(--rollout-quant w4a16 --no-aligned-learner --loss grpo
                            --mismatch-correction tis) ;;
    w4a16-qarl-tbpo)    RL=(--rollout-quant w4a16 --aligned-learner --loss tbpo) ;;
  esac
  SAVE="$OUT/$variant" bash "$HERE/train.sh" "$DEVICE" --train-iters "${STEPS:-60}" "$@" "${RL[@]}"
done
"${PYTHON:-python3}" "$HERE/plot_comparison.py" "$OUT" bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo
