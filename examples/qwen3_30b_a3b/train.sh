#!/usr/bin/env bash
# Qwen3-30B-A3B RL on one 8-GPU node: the paper's comparison as variants of one command.
#
#   python tools/checkpoint.py hf-to-megatron HF_DIR MEGATRON_DIR     # once
#   examples/qwen3_30b_a3b/train.sh VARIANT DATA.jsonl HF_DIR MEGATRON_DIR [extra flags]
#
# HF_DIR: the HF model (Qwen/Qwen3-30B-A3B; its tokenizer is the run's); MEGATRON_DIR: its
# conversion, the weights the run starts from (--pretrained-checkpoint). A re-run resumes from
# the run's own latest checkpoint (--load of its --save folder). EVAL_DATA (a .jsonl/.parquet
# of held-out prompts) turns on the held-out reward, before RL, every 10 steps and after;
# without it the run has none (DATA's prompts are trained on).
#
# The rollout engine (ENGINE) is SGLang by default: the extra flags must then name the servers,
# --sglang-urls URL,... (running ones) or --sglang-num-engines N --sglang-model-path SERVED
# (launched here; docs/sglang.md), where SERVED is HF_DIR for the bf16 variants and the
# quantized export for the QaRL ones (`tools/checkpoint.py export MEGATRON_DIR SERVED --scheme
# w4a16` or `fp8-block`: SGLang serves the learner's quantized tensors in that format).
# ENGINE=embedded needs neither. The quantized-rollout
# baseline (w4a16-rollout-grpo) runs on the embedded engine unless ENGINE says otherwise, and
# SGLang refuses it: SGLang serves the learner's own quantized tensors, which a bf16 learner
# does not have.
#
# VARIANT:
#   w4a16-qarl-tbpo    W4A16 rollouts, aligned W4A16 learner, TBPO    (QaRL)
#   fp8-qarl-tbpo      FP8 block rollouts, aligned FP8 learner, TBPO  (QaRL)
#   bf16-gspo          bf16 rollouts and learner, GSPO                (the paper's MoE baseline)
#   w4a16-rollout-gspo W4A16 rollouts, bf16 learner, GSPO             (its quantized-rollout one)
#   bf16-grpo          bf16 rollouts and learner, GRPO                (the dense models' baseline)
#   w4a16-rollout-grpo W4A16 rollouts, bf16 learner, GRPO
# The baselines take truncated importance sampling (--mismatch-correction tis: per token for
# GRPO, on the sequence weight for GSPO), as the paper's section 4 sets its baselines up; GSPO
# averages per sequence, as its paper does (--loss-agg-mode seq-mean-token-mean).
#
# Layout: experts over 8 GPUs (EP=8, expert-TP 1), attention TP=2 with sequence parallelism
# (data parallel 4). W4A16 groups of 128 fit every shard: 768-wide experts are not split
# (expert-TP 1), and attention is not quantized (--quant-targets experts, what SGLang's W4A16
# config serves); FP8 quantizes attention too (--quant-targets experts+attention, as SGLang's
# fp8 config converts every linear but the router).
# Attention runs through torch's SDPA (--attention-backend sdpa): Megatron's local attention
# would hold [micro-batch, 16 heads, 8k, 8k] scores per layer for backward at these lengths.
# The bf16 learners run their experts as grouped GEMMs (--moe-grouped-gemm), as the quantized
# ones do: Megatron's SequentialMLP loop would make the baselines slower than bf16 needs to be.
# Hyperparameters follow the paper's Table 2 (Muon, lr 1e-6, weight decay 0.01, 8 samples per
# prompt at temperature 1.0, 8 optimizer steps per rollout (its 512 prompts in mini-batches of
# 64; here 64 prompts in mini-batches of 8), evaluation at temperature 0.6, the TBPO band from
# the objective's defaults, prompts up to 2048 tokens with longer ones left out (its
# max_prompt_length; responses up to 8192 tokens here, 16384 there); OPTIMIZER=adam takes Adam
# with the distributed optimizer instead.
# With Muon, --use-distributed-optimizer (an extra flag) shards its state by whole weights over
# the data-parallel ranks (Megatron's layer-wise optimizer; its test passes on 2 GPUs under
# NCCL, it has not run at this layout: docs/training.md, "Muon").
# DATA rows: {"prompt": ..., "answer": ...}.
set -euo pipefail
VARIANT=${1:?variant}; DATA=${2:?prompt data (.jsonl/.parquet)}; HF_DIR=${3:?HF model dir}
MEGATRON_DIR=${4:?Megatron checkpoint (tools/checkpoint.py hf-to-megatron HF_DIR MEGATRON_DIR)}
shift 4
OPTIMIZER=${OPTIMIZER:-muon}
ENGINE_DEFAULT=sglang
TARGETS=experts

case "$VARIANT" in
  w4a16-qarl-tbpo)    RL=(--rollout-quant w4a16 --aligned-learner --loss tbpo) ;;
  fp8-qarl-tbpo)      RL=(--rollout-quant fp8-block --aligned-learner --loss tbpo)
                      TARGETS=experts+attention ;;
  bf16-grpo|bf16-gspo) RL=(--rollout-quant none --loss "${VARIANT#bf16-}" --mismatch-correction tis
                          --moe-grouped-gemm) ;;
  w4a16-rollout-grpo|w4a16-rollout-gspo)
                      RL=(--rollout-quant w4a16 --no-aligned-learner
                          --loss "${VARIANT#w4a16-rollout-}" --mismatch-correction tis
                          --moe-grouped-gemm)
                      ENGINE_DEFAULT=embedded ;;
  *) echo "unknown variant $VARIANT" >&2; exit 2 ;;
esac
case "$VARIANT" in *gspo) RL+=(--loss-agg-mode seq-mean-token-mean) ;; esac  # GSPO's own mean
DIST_OPT=(); [ "$OPTIMIZER" = adam ] && DIST_OPT=(--use-distributed-optimizer)

exec torchrun --standalone --nproc-per-node 8 -m megatron_qarl.train \
  --device cuda --bf16 --model qwen3-30b-a3b --attention-backend sdpa \
  --rollout-engine "${ENGINE:-$ENGINE_DEFAULT}" \
  --tensor-model-parallel-size 2 --sequence-parallel \
  --expert-model-parallel-size 8 --expert-tensor-parallel-size 1 \
  --optimizer "$OPTIMIZER" ${DIST_OPT[@]+"${DIST_OPT[@]}"} --lr 1e-6 --weight-decay 0.01 --clip-grad 1.0 \
  --prompt-data "$DATA" --prompt-key prompt --answer-key answer \
  --tokenizer-type hf --tokenizer-model "$HF_DIR" --prompt-template chat-boxed \
  --reward math-verify \
  --seq-length 10240 --rollout-max-new-tokens 8192 --skip-long-prompts --rollout-temperature 1.0 \
  --rollout-batch-size 64 --n-samples-per-prompt 8 --global-batch-size 64 \
  --eval-temperature 0.6 ${EVAL_DATA:+--eval-prompt-data "$EVAL_DATA" --eval-interval 10} \
  --max-tokens-per-micro-batch 16384 \
  "${RL[@]}" --quant-targets "$TARGETS" \
  --pretrained-checkpoint "$MEGATRON_DIR" --load "runs/qwen3-30b-a3b-$VARIANT" \
  --train-iters 200 --save "runs/qwen3-30b-a3b-$VARIANT" --save-interval 10 \
  "$@"
