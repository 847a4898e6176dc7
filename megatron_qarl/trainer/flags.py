"""The command line: Megatron-LM style flags for model, parallelism, optimizer and
checkpoints, plus the RL flags (rollout, quantization, loss, data, rewards, warm start).

Parsing only; `validation.py` checks every value before any work starts.
"""
from __future__ import annotations

import argparse

from ..quant import SCHEME_NAMES
from ..rl.data.templates import TEMPLATE_NAMES
from ..rl.objectives.config import add_policy_loss_args
from ..rl.rewards import REWARDS
from .muon import MATMUL_PRECISIONS, SCALE_MODES
from .sglang_flags import EMBEDDED_DEFAULTS, add_sglang_args

ROLLOUT_ENGINES = ("embedded", "sglang")
OPTIMIZERS = ("adam", "muon")
DEVICES = ("auto", "cpu", "cuda")
#: Megatron's OptimizerParamScheduler's decay styles (its WSD needs flags of its own)
LR_DECAY_STYLES = ("constant", "linear", "cosine", "inverse-square-root")


def _model(p):
    g = p.add_argument_group("model")
    g.add_argument("--model", default="qwen3-moe-tiny", help="model preset (megatron_qarl.models)")
    g.add_argument("--num-layers", type=int, help="override the preset's layer count")
    g.add_argument("--hidden-size", type=int, help="override the preset's hidden size")
    g.add_argument("--num-experts", type=int, help="override the preset's expert count")
    g.add_argument("--moe-aux-loss-coeff", type=float, default=None,
                   help="weight of the routers' load-balancing loss (default: the preset's, "
                        "HF's router_aux_loss_coef: 0.001 for Qwen3-MoE; 0 turns it off)")
    g.add_argument("--make-vocab-size-divisible-by", type=int, default=128,
                   help="pad the tokenizer's vocabulary to a multiple of this times TP")
    g.add_argument("--bf16", action="store_true", help="bf16 params with fp32 main weights")
    g.add_argument("--quant-kernels", choices=("auto", "reference"), default="auto",
                   help="auto: the Triton kernels (qarl_kernels) on CUDA when Triton is "
                        "installed; reference: the pure-torch ops everywhere")
    g.add_argument("--quant-targets", default="experts",
                   help="which linears are quantized: experts, or experts+attention "
                        "(attention's projections then run the low-bit GEMM too: it aligns "
                        "those layers, and is faster than bf16 only at small decode batches; "
                        "the measured ratios are in docs/training.md, Flags)")
    g.add_argument("--attention-backend", choices=("local", "sdpa"), default="local",
                   help="local: Megatron's DotProductAttention (the [heads, sq, sk] scores in "
                        "memory); sdpa: torch's scaled_dot_product_attention, memory linear in "
                        "the sequence, for long responses without TransformerEngine")
    g.add_argument("--moe-grouped-gemm", action="store_true",
                   help="bf16 experts (--rollout-quant none, or the learner under "
                        "--no-aligned-learner) run one torch._grouped_mm per projection instead "
                        "of Megatron's SequentialMLP loop over the experts, and their decode "
                        "steps can be CUDA-graphed; costs a bf16 copy of the experts' weights. "
                        "Quantized experts are always grouped")
    g.add_argument("--quant-keep-operand", action="store_true",
                   help="W4A16 learner: keep each expert weight's dequantized bf16 GEMM operand "
                        "for the optimizer step, so the CUDA kernels dequantize once per step "
                        "instead of in every large-batch forward and every backward (same "
                        "bits); costs 2 bytes per parameter of the quantized experts in GPU "
                        "memory")


def _parallel(p):
    g = p.add_argument_group("parallelism")
    g.add_argument("--tensor-model-parallel-size", type=int, default=1)
    g.add_argument("--pipeline-model-parallel-size", type=int, default=1)
    g.add_argument("--expert-model-parallel-size", type=int, default=1)
    g.add_argument("--expert-tensor-parallel-size", type=int, default=None,
                   help="default: the tensor-parallel size, as in Megatron")
    g.add_argument("--sequence-parallel", action="store_true")
    g.add_argument("--use-distributed-optimizer", action="store_true",
                   help="shard optimizer state over data-parallel ranks: Adam's in slices "
                        "(Megatron's distributed optimizer; CUDA only), Muon's by whole weights "
                        "(Megatron's layer-wise one)")
    g.add_argument("--distributed-timeout-minutes", type=float, default=None,
                   help="how long a collective may wait before the process group fails "
                        "(torch's and Megatron's groups). Default: theirs (NCCL 10, gloo 30); "
                        "120 with --rollout-engine sglang, where every rank but 0 waits in one "
                        "collective while rank 0 drives the servers through the rollout")
    g.add_argument("--device", choices=DEVICES, default="auto",
                   help="cpu runs Megatron through the CPU support module (slow; tiny runs)")


def _training(p):
    g = p.add_argument_group("training")
    g.add_argument("--train-iters", type=int, default=20,
                   help="RL steps; 0 with --sft-iters: warm start only (saved as step 0)")
    g.add_argument("--micro-batch-size", type=int, default=8, help="responses per forward")
    g.add_argument("--global-batch-size", type=int, default=64,
                   help="responses per optimizer step (all data-parallel ranks)")
    g.add_argument("--max-tokens-per-micro-batch", type=int, default=0,
                   help="bucket responses by length into micro-batches of at most this many "
                        "(padded) tokens instead of --micro-batch-size responses; 0: off")
    g.add_argument("--logprob-max-tokens-per-micro-batch", type=int, default=0,
                   help="the same for the no-grad old-logprob forward, which keeps no "
                        "activations and can take larger micro-batches; 0: "
                        "--max-tokens-per-micro-batch")
    g.add_argument("--seq-length", type=int, default=64, help="max prompt + response tokens")
    g.add_argument("--optimizer", choices=OPTIMIZERS, default="adam")
    g.add_argument("--lr", type=float, default=1e-5,
                   help="the peak learning rate, after any warm-up")
    g.add_argument("--lr-decay-style", choices=LR_DECAY_STYLES, default="constant",
                   help="Megatron's schedule after the warm-up, to --min-lr over "
                        "--lr-decay-iters RL steps")
    g.add_argument("--lr-decay-iters", type=int, default=0,
                   help="RL steps the decay ends at, warm-up included; 0: --train-iters")
    g.add_argument("--lr-warmup-iters", type=int, default=0,
                   help="RL steps of linear warm-up from --lr-warmup-init to --lr (each of "
                        "a step's optimizer updates takes its share)")
    g.add_argument("--lr-warmup-init", type=float, default=0.0)
    g.add_argument("--min-lr", type=float, default=0.0, help="where the decay ends")
    g.add_argument("--weight-decay", type=float, default=0.0)
    g.add_argument("--adam-beta1", type=float, default=0.9)
    g.add_argument("--adam-beta2", type=float, default=0.98)
    g.add_argument("--adam-eps", type=float, default=1e-8)
    g.add_argument("--clip-grad", type=float, default=1.0)
    g.add_argument("--muon-momentum", type=float, default=0.95)
    g.add_argument("--muon-use-nesterov", action="store_true")
    g.add_argument("--muon-scale-mode", choices=SCALE_MODES, default="spectral",
                   help="the factor on an orthogonalized [m, n] update: spectral sqrt(max(m, n)), "
                        "shape_scaling sqrt(max(1, m/n)), unit_rms_norm sqrt(m/n)")
    g.add_argument("--muon-extra-scale-factor", type=float, default=1.0,
                   help="times the scale mode's factor (0.2 matches Adam's update RMS)")
    g.add_argument("--muon-num-ns-steps", type=int, default=5, help="Newton-Schulz iterations")
    g.add_argument("--muon-fp32-matmul-prec", choices=MATMUL_PRECISIONS, default="medium",
                   help="medium: the Newton-Schulz iterations in bf16; high/highest: in fp32 "
                        "(TF32 allowed / not)")
    g.add_argument("--seed", type=int, default=1234)
    g.add_argument("--deterministic-mode", action="store_true",
                   help="the same run twice gives the same bits, gradients included "
                        "(Megatron-LM's flag; generations repeat without it): torch's "
                        "deterministic algorithms for the atomics left (attention's backward, "
                        "the embedding's); slower. Under torchrun it needs NCCL_ALGO=Ring or "
                        "Tree. Launched SGLang servers get --enable-deterministic-inference")


def _warm_start(p):
    g = p.add_argument_group("warm start (SFT before RL, only when not resuming)")
    g.add_argument("--sft-iters", type=int, default=0)
    g.add_argument("--sft-lr", type=float, default=1e-3)
    g.add_argument("--sft-lr-decay-style", choices=LR_DECAY_STYLES, default="constant",
                   help="as --lr-decay-style, over the --sft-iters steps")
    g.add_argument("--sft-lr-warmup-iters", type=int, default=0,
                   help="steps of linear warm-up from 0 to --sft-lr")
    g.add_argument("--sft-min-lr", type=float, default=0.0)
    g.add_argument("--sft-batch-size", type=int, default=64)


def _rollout(p):
    g = p.add_argument_group("rollout")
    g.add_argument("--rollout-engine", choices=ROLLOUT_ENGINES, default="embedded")
    g.add_argument("--rollout-quant", choices=SCHEME_NAMES, default="none",
                   help="the sampler's weight format")
    g.add_argument("--aligned-learner", action=argparse.BooleanOptionalAction, default=True,
                   help="learner forwards with the rollout's quantized weights (QaRL); "
                        "--no-aligned-learner trains and recomputes logprobs in full precision")
    g.add_argument("--rollout-batch-size", type=int, default=8, help="prompts per RL step")
    g.add_argument("--n-samples-per-prompt", type=int, default=8)
    g.add_argument("--rollout-temperature", type=float, default=1.0)
    g.add_argument("--rollout-top-p", type=float, default=1.0)
    g.add_argument("--rollout-top-k", type=int, default=-1)
    g.add_argument("--rollout-max-new-tokens", type=int, default=16)
    g.add_argument("--rollout-max-batch", type=int, default=EMBEDDED_DEFAULTS["rollout_max_batch"],
                   help="embedded engine: sequences decoded together (KV cache rows)")
    g.add_argument("--rollout-cuda-graph", action=argparse.BooleanOptionalAction,
                   default=EMBEDDED_DEFAULTS["rollout_cuda_graph"],
                   help="embedded engine: replay each decode step from a CUDA graph where the "
                        "model allows it (CUDA, grouped experts: quantized, or bf16 with "
                        "--moe-grouped-gemm; the log says why not); --no-rollout-cuda-graph "
                        "decodes eagerly")
    g.add_argument("--rollout-routing-replay", action="store_true",
                   help="the learner's MoE routers replay the experts the rollout engine routed "
                        "each token to (megatron-core RouterReplay), in the old-logprob and "
                        "training forwards. The embedded engine records them; launched SGLang "
                        "servers get --enable-return-routed-experts")
    g.add_argument("--advantage-std-norm", action=argparse.BooleanOptionalAction, default=True)


def _data(p):
    g = p.add_argument_group("data and rewards")
    g.add_argument("--prompt-data", default="synthetic:arithmetic",
                   help=".jsonl, .json or .parquet file, or synthetic:arithmetic")
    g.add_argument("--eval-prompt-data", default=None,
                   help="held-out prompts (default for synthetic data: another draw of the "
                        "task, without the prompts the training set holds)")
    g.add_argument("--eval-num-prompts", type=int, default=64)
    g.add_argument("--eval-interval", type=int, default=0, help="RL steps; 0: before/after only")
    g.add_argument("--eval-temperature", type=float, default=0.0,
                   help="0: greedy (top-k 1). The paper evaluates at 0.6")
    g.add_argument("--eval-top-p", type=float, default=1.0)
    g.add_argument("--eval-samples-per-prompt", type=int, default=1,
                   help="the held-out reward is the mean over these samples (avg@n); > 1 needs "
                        "--eval-temperature > 0")
    g.add_argument("--prompt-key", default="prompt")
    g.add_argument("--answer-key", default="answer")
    g.add_argument("--skip-long-prompts", action="store_true",
                   help="leave out prompts over --seq-length minus --rollout-max-new-tokens "
                        "tokens (logged) instead of stopping at the first (verl's "
                        "data.filter_overlong_prompts)")
    g.add_argument("--prompt-template", default="plain",
                   help=f"one of {', '.join(TEMPLATE_NAMES)} or a format string with {{prompt}}")
    g.add_argument("--reward", default="arithmetic",
                   help=f"one of {', '.join(REWARDS)}, or module:function: your own "
                        "callable (response_text, answer) -> float, imported from "
                        "PYTHONPATH")
    g.add_argument("--tokenizer-type", choices=("char", "hf"), default="char")
    g.add_argument("--tokenizer-model", default=None, help="local HF tokenizer folder")
    g.add_argument("--synthetic-num-prompts", type=int, default=2000)
    g.add_argument("--synthetic-digits", type=int, default=2)


def _checkpoint_and_logging(p):
    g = p.add_argument_group("checkpoints and logging")
    g.add_argument("--save", default=None, help="checkpoint folder (also holds metrics.jsonl)")
    g.add_argument("--load", default=None, help="resume from this checkpoint folder")
    g.add_argument("--pretrained-checkpoint", default=None,
                   help="start from this Megatron checkpoint's model weights (tools/checkpoint"
                        ".py hf-to-megatron's output, or a training --save folder or one of its "
                        "iter_N): a fresh optimizer at step 0; --load resumes instead once it "
                        "holds a checkpoint")
    g.add_argument("--ckpt-step", type=int, default=None,
                   help="load this step instead of the latest")
    g.add_argument("--save-interval", type=int, default=0, help="RL steps; 0: only at the end")
    g.add_argument("--exit-interval", type=int, default=0,
                   help="stop (after saving) at a step that is a multiple of it, as "
                        "Megatron's flag (a resumed run stops at the next multiple)")
    g.add_argument("--metrics-path", default=None, help="default: <save>/metrics.jsonl")
    g.add_argument("--log-interval", type=int, default=1)
    g.add_argument("--no-progress-bar", action="store_true")
    g.add_argument("--wandb-project", default=None, help="log to wandb (offline unless "
                   "WANDB_MODE=online or an API key is configured)")
    g.add_argument("--wandb-exp-name", default=None)
    g.add_argument("--wandb-save-dir", default=None)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m megatron_qarl.train",
        description="QaRL: RL for Megatron-Core MoE models with quantized rollouts",
        allow_abbrev=False,  # as Megatron-LM's: --max-tokens must not mean a longer flag
    )
    for add in (_model, _parallel, _training, _warm_start, _rollout, _data,
                _checkpoint_and_logging):
        add(p)
    add_sglang_args(p)
    add_policy_loss_args(p)
    return p
