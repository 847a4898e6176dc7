#!/usr/bin/env bash
# The tiny example: a randomly initialised Qwen3-MoE-shaped model (2 layers, 4 experts) learns
# two-digit addition. Phase 1, once: a full-precision warm start (SFT), saved as step 0 (the
# stand-in for a pretrained bf16 model). Phase 2: RL from it, by default QaRL-TBPO with W4A16
# rollouts and the aligned W4A16 learner. Re-running resumes phase 2 from its last checkpoint.
#
#   examples/tiny/train.sh cpu [extra RL flags]     # CPU only
#   examples/tiny/train.sh gpu [extra RL flags]     # one GPU, bf16
#   NPROC=2 examples/tiny/train.sh cpu ...          # 2 data-parallel processes
#
# Extra flags go to both phases but the warm start keeps its own scheme and loss; e.g.
# `--no-aligned-learner --loss grpo` gives the quantized-rollout baseline.
# SAVE (default runs/tiny-DEVICE) holds rl/ and, unless WARM_START names another folder
# (compare.sh shares one), warm-start/.
set -euo pipefail
DEVICE=${1:-cpu}; shift || true
NPROC=${NPROC:-1}
SAVE=${SAVE:-runs/tiny-$DEVICE}
WARM_START=${WARM_START:-$SAVE/warm-start}

case "$DEVICE" in
  cpu) DEVICE_FLAGS=(--device cpu); export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} ;;
  gpu) DEVICE_FLAGS=(--device cuda --bf16) ;;
  *) echo "usage: $0 cpu|gpu [flags...]" >&2; exit 2 ;;
esac

# one process runs the trainer directly: its flag errors then end the script with the
# trainer's own one-line message and status 2, not inside torchrun's traceback
LAUNCH=(python3); [ "$NPROC" -gt 1 ] && LAUNCH=(torchrun --standalone --nproc-per-node "$NPROC")
train() {
  "${LAUNCH[@]}" -m megatron_qarl.train \
    "${DEVICE_FLAGS[@]}" \
    --model qwen3-moe-tiny --seed 1234 \
    --prompt-data synthetic:arithmetic --synthetic-digits 2 --synthetic-num-prompts 4000 \
    --reward arithmetic --tokenizer-type char --prompt-template plain \
    --seq-length 16 --rollout-max-new-tokens 6 --eval-num-prompts 128 --eval-interval 10 \
    --sft-iters 1500 --sft-batch-size 64 --sft-lr 2e-3 \
    --rollout-quant w4a16 --aligned-learner --loss tbpo \
    --train-iters 60 --rollout-batch-size 16 --n-samples-per-prompt 8 \
    --global-batch-size 128 --micro-batch-size $((128 / NPROC)) --lr 1e-4 \
    "$@"
}

if [ ! -d "$WARM_START/iter_0000000" ]; then
  train "$@" --rollout-quant none --loss grpo --mismatch-correction none --train-iters 0 \
    --save "$WARM_START"
fi
if [ ! -d "$SAVE/rl" ]; then
  mkdir -p "$SAVE/rl" && cp -r "$WARM_START/iter_0000000" "$SAVE/rl/"
fi
train --load "$SAVE/rl" --save "$SAVE/rl" --save-interval 10 "$@"
