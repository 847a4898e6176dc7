#!/usr/bin/env bash
# The three-way comparison on the tiny example, same seeds, one shared warm start:
#   bf16-grpo           bf16 rollouts and learner, GRPO
#   w4a16-rollout-grpo  W4A16 rollouts, bf16 learner, GRPO (the quantized-rollout baseline)
#   w4a16-qarl-tbpo     W4A16 rollouts, aligned W4A16 learner, TBPO (QaRL)
#
#   examples/tiny/compare.sh gpu|cpu OUT_DIR [extra flags for every variant]
set -euo pipefail
DEVICE=${1:?cpu|gpu}; OUT=${2:?output folder}; shift 2
HERE=$(dirname "$0")
export WARM_START="$OUT/warm-start"

for variant in bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo; do
  case "$variant" in
    bf16-grpo)          RL=(--rollout-quant none --loss grpo) ;;
    w4a16-rollout-grpo) RL=(--rollout-quant w4a16 --no-aligned-learner --loss grpo) ;;
    w4a16-qarl-tbpo)    RL=(--rollout-quant w4a16 --aligned-learner --loss tbpo) ;;
  esac
  SAVE="$OUT/$variant" "$HERE/train.sh" "$DEVICE" --train-iters "${STEPS:-60}" "$@" "${RL[@]}"
done
"${PYTHON:-python3}" "$HERE/plot_comparison.py" "$OUT" bf16-grpo w4a16-rollout-grpo w4a16-qarl-tbpo
