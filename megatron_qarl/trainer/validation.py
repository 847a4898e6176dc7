"""Every flag checked before any work starts (no model built, no process group joined):
each error names the flag and the fix."""
from __future__ import annotations

import argparse
import importlib.util
import os

import torch

from ..quant import W4A16, get_scheme
from ..rl.data.arithmetic import SYNTHETIC_PREFIX, TASKS
from ..rl.data.templates import check_template
from ..rl.objectives.config import PolicyLossConfig
from ..rl.rewards import get_reward
from ..rollout.base import SamplingParams
from ..checkpoint.paths import METADATA, available_steps, is_megatron, resolve, step_of
from .sglang_flags import check_sglang_flags


class FlagError(ValueError):
    """A command-line value that cannot work; the message says which flag and how to fix it."""


def _positive(args, *names):
    for name in names:
        value = getattr(args, name)
        if value is None or value < 1:
            raise FlagError(f"--{name.replace('_', '-')} must be >= 1, got {value}")


def _non_negative(args, *names):
    for name in names:
        value = getattr(args, name)
        if value < 0:
            raise FlagError(f"--{name.replace('_', '-')} must be >= 0, got {value}")


def _parallel(args, world_size: int) -> int:
    """Returns the data-parallel size."""
    _positive(args, "tensor_model_parallel_size", "expert_model_parallel_size",
              "pipeline_model_parallel_size")
    if args.expert_tensor_parallel_size is None:
        args.expert_tensor_parallel_size = args.tensor_model_parallel_size
    _positive(args, "expert_tensor_parallel_size")
    if args.pipeline_model_parallel_size != 1:
        raise FlagError("--pipeline-model-parallel-size must be 1: the RL loop does not run "
                        "pipeline schedules; use tensor/expert parallelism for large models")
    tp, ep, etp = (args.tensor_model_parallel_size, args.expert_model_parallel_size,
                   args.expert_tensor_parallel_size)
    if world_size % tp:
        raise FlagError(f"--tensor-model-parallel-size {tp} does not divide the {world_size} "
                        f"processes; launch a multiple of {tp} (torchrun --nproc-per-node)")
    if world_size % (ep * etp):
        raise FlagError(f"--expert-model-parallel-size {ep} x --expert-tensor-parallel-size "
                        f"{etp} does not divide the {world_size} processes")
    if tp == 1 and args.sequence_parallel:
        raise FlagError("--sequence-parallel splits the sequence over tensor-parallel ranks: "
                        "drop it, or give --tensor-model-parallel-size > 1")
    if tp > 1 and not args.sequence_parallel:
        raise FlagError("--tensor-model-parallel-size > 1 needs --sequence-parallel (Megatron "
                        "requires it for MoE, and every preset is MoE)")
    if (args.optimizer == "muon" and args.use_distributed_optimizer and world_size == tp
            and ep * etp < tp):
        # megatron-core 0.16.1's layer-wise optimizer then shards nothing, yet sums its norm
        # over every rank: experts replicated over the TP ranks count twice, and saving fails
        raise FlagError(f"--use-distributed-optimizer with Muon shards over data-parallel "
                        f"ranks: with one, and experts replicated over the {tp} TP ranks "
                        f"(expert model x tensor parallel {ep * etp}), megatron-core counts "
                        f"their gradients {tp // (ep * etp)} times; drop it")
    return world_size // tp


def _batches(args, dp: int):
    _positive(args, "micro_batch_size", "global_batch_size", "seq_length",
              "rollout_batch_size", "n_samples_per_prompt", "rollout_max_batch",
              "make_vocab_size_divisible_by", "log_interval", "synthetic_num_prompts",
              "eval_num_prompts", "eval_samples_per_prompt", "sft_batch_size")
    _non_negative(args, "train_iters", "max_tokens_per_micro_batch",
                  "logprob_max_tokens_per_micro_batch", "sft_iters", "save_interval",
                  "exit_interval", "eval_interval")
    if args.n_samples_per_prompt < 2:
        raise FlagError("--n-samples-per-prompt must be >= 2: advantages are normalised within "
                        "each prompt's group of responses")
    if args.rollout_batch_size % dp:
        raise FlagError(f"--rollout-batch-size {args.rollout_batch_size} must be a multiple of "
                        f"the data-parallel size {dp} (each rank samples whole groups)")
    responses = args.rollout_batch_size * args.n_samples_per_prompt
    if responses % args.global_batch_size:
        raise FlagError(f"--global-batch-size {args.global_batch_size} must divide the "
                        f"{responses} responses per step (--rollout-batch-size x "
                        f"--n-samples-per-prompt); each divides into optimizer steps")
    if args.sft_batch_size % dp:
        raise FlagError(f"--sft-batch-size {args.sft_batch_size} must be a multiple of the "
                        f"data-parallel size {dp} (ranks take equal shares)")
    if args.global_batch_size % dp:
        raise FlagError(f"--global-batch-size {args.global_batch_size} must be a multiple of "
                        f"the data-parallel size {dp}")
    per_rank = args.global_batch_size // dp
    if not args.max_tokens_per_micro_batch and per_rank % args.micro_batch_size:
        raise FlagError(f"--micro-batch-size {args.micro_batch_size} must divide the "
                        f"{args.global_batch_size // dp} responses per rank per optimizer step "
                        f"(--global-batch-size / data-parallel size), or set "
                        f"--max-tokens-per-micro-batch")
    for flag in ("max_tokens_per_micro_batch", "logprob_max_tokens_per_micro_batch"):
        budget = getattr(args, flag)
        if budget and budget < args.seq_length:
            raise FlagError(f"--{flag.replace('_', '-')} {budget} is below --seq-length "
                            f"{args.seq_length}: a full-length response would not fit; raise "
                            f"it to at least {args.seq_length}")
    if args.rollout_max_new_tokens >= args.seq_length:
        raise FlagError(f"--rollout-max-new-tokens {args.rollout_max_new_tokens} leaves no room "
                        f"for the prompt in --seq-length {args.seq_length}; raise --seq-length")


def _lr_schedules(args):
    """What Megatron's OptimizerParamScheduler asserts, named by flag, for RL's schedule and
    the warm start's; and the flags a schedule would not read."""
    _non_negative(args, "lr_decay_iters", "lr_warmup_iters", "lr_warmup_init", "min_lr",
                  "sft_lr_warmup_iters", "sft_min_lr")
    if args.lr_warmup_init > args.lr:
        raise FlagError(f"--lr-warmup-init {args.lr_warmup_init} is above --lr {args.lr}: the "
                        f"warm-up rises from it to --lr; lower it")
    if args.lr_warmup_init and not args.lr_warmup_iters:
        raise FlagError("--lr-warmup-init changes nothing without --lr-warmup-iters; set both "
                        "or drop it")
    if args.lr_decay_iters and args.lr_decay_style == "constant":
        raise FlagError("--lr-decay-iters changes nothing with --lr-decay-style constant; set "
                        "a decay style (e.g. cosine) or drop it")
    span, span_flag = ((args.lr_decay_iters, "--lr-decay-iters") if args.lr_decay_iters
                       else (args.train_iters, "--train-iters"))
    _lr_schedule(args, "", span if args.train_iters else 0, span_flag)
    _lr_schedule(args, "sft_", args.sft_iters, "--sft-iters")


def _lr_schedule(args, prefix: str, span: int, span_flag: str):
    """One schedule: prefix "" for RL's flags, "sft_" for the warm start's; span, the steps it
    warms up and decays over (0: the phase does not run)."""
    def flag(name):
        return f"--{(prefix + name).replace('_', '-')}"

    lr, min_lr = getattr(args, prefix + "lr"), getattr(args, prefix + "min_lr")
    style = getattr(args, prefix + "lr_decay_style")
    warmup = getattr(args, prefix + "lr_warmup_iters")
    if min_lr > lr:
        raise FlagError(f"{flag('min_lr')} {min_lr} is above {flag('lr')} {lr}: the decay ends "
                        f"at {flag('min_lr')}; lower it")
    if min_lr and style == "constant":
        raise FlagError(f"{flag('min_lr')} changes nothing with {flag('lr_decay_style')} "
                        f"constant; set a decay style (e.g. cosine) or drop it")
    if span and warmup >= span:
        raise FlagError(f"{flag('lr_warmup_iters')} {warmup} must be below {span_flag} {span}: "
                        f"the warm-up is the start of the schedule's span")


def _numbers(args):
    for name in ("lr", "sft_lr", "adam_eps"):
        if not getattr(args, name) > 0:
            raise FlagError(f"--{name.replace('_', '-')} must be > 0, got {getattr(args, name)}")
    if args.moe_aux_loss_coeff is not None and not args.moe_aux_loss_coeff >= 0:
        raise FlagError(f"--moe-aux-loss-coeff must be >= 0 (0: no load-balancing loss), got "
                        f"{args.moe_aux_loss_coeff}")
    if args.distributed_timeout_minutes is not None and not args.distributed_timeout_minutes > 0:
        raise FlagError(f"--distributed-timeout-minutes must be > 0, got "
                        f"{args.distributed_timeout_minutes}")
    if args.eval_temperature < 0:
        raise FlagError(f"--eval-temperature must be >= 0 (0: greedy), got {args.eval_temperature}")
    if not 0 < args.eval_top_p <= 1:
        raise FlagError(f"--eval-top-p must be in (0, 1], got {args.eval_top_p}")
    if args.eval_top_p != 1.0 and args.eval_temperature == 0:
        raise FlagError(f"--eval-top-p {args.eval_top_p} with greedy decoding changes nothing; "
                        f"set --eval-temperature (e.g. 0.6) or drop the flag")
    if args.eval_samples_per_prompt > 1 and args.eval_temperature == 0:
        raise FlagError(f"--eval-samples-per-prompt {args.eval_samples_per_prompt} with greedy "
                        f"decoding gives {args.eval_samples_per_prompt} copies of one response; "
                        f"set --eval-temperature (e.g. 0.6) or drop the flag")
    for name in ("adam_beta1", "adam_beta2", "muon_momentum"):
        if not 0 <= getattr(args, name) < 1:
            raise FlagError(f"--{name.replace('_', '-')} must be in [0, 1)")
    _non_negative(args, "weight_decay", "clip_grad")
    _positive(args, "muon_num_ns_steps")
    if not args.muon_extra_scale_factor > 0:
        raise FlagError(f"--muon-extra-scale-factor must be > 0, got "
                        f"{args.muon_extra_scale_factor}")
    if args.rollout_top_k == 1:
        raise FlagError("--rollout-top-k 1 samples greedily: every response to a prompt is the "
                        "same, so group advantages are all zero (and SGLang then reports "
                        "logprobs without the temperature); use -1 (off) or k >= 2")
    try:
        SamplingParams(args.rollout_temperature, args.rollout_top_p, args.rollout_top_k,
                       args.rollout_max_new_tokens, (), args.n_samples_per_prompt)
        PolicyLossConfig.from_flags(args, refuse_unread=_runs_rl(args))
    except ValueError as err:
        raise FlagError(str(err)) from None


def _runs_rl(args) -> bool:
    """Whether RL steps run. A warm start alone (--train-iters 0) reads no RL-phase flag, so
    the checks that refuse an RL flag its run would not read pass them: one flag list serves
    both phases of examples/tiny/train.sh, whose warm start trains without a scheme or loss
    of its own."""
    return args.train_iters > 0


def _quant(args):
    try:
        get_scheme(args.rollout_quant)
    except ValueError as err:
        raise FlagError(f"--rollout-quant: {err}") from None
    if args.quant_targets not in ("experts", "experts+attention"):
        raise FlagError(f"--quant-targets must be 'experts' or 'experts+attention', got "
                        f"{args.quant_targets!r}")
    if args.quant_targets != "experts" and args.rollout_quant == "none" and _runs_rl(args):
        raise FlagError(f"--quant-targets {args.quant_targets} with --rollout-quant none "
                        f"quantizes nothing (the run is the bf16 one): drop it, or pick a "
                        f"scheme")
    if (args.quant_keep_operand and not isinstance(get_scheme(args.learner_quant), W4A16)
            and _runs_rl(args)):
        raise FlagError(f"--quant-keep-operand keeps the W4A16 experts' dequantized operand, but "
                        f"the learner runs {args.learner_quant!r} (--rollout-quant {args.rollout_quant}"
                        f"{'' if args.aligned_learner else ', --no-aligned-learner'}): drop "
                        f"it, or train a W4A16 learner (--rollout-quant w4a16 with "
                        f"--aligned-learner)")
    w4a16_runs = [isinstance(get_scheme(args.learner_quant), W4A16),
                  args.rollout_engine == "embedded" and isinstance(get_scheme(args.rollout_quant),
                                                                   W4A16)]
    if args.device == "cuda" and not args.bf16 and any(w4a16_runs):
        raise FlagError(f"--rollout-quant {args.rollout_quant} on CUDA needs --bf16: the W4A16 "
                        f"kernels take bf16 activations, as SGLang serves the model (fp32 runs "
                        f"on --device cpu)")


def _data(args):
    for flag, source in (("--prompt-data", args.prompt_data),
                         ("--eval-prompt-data", args.eval_prompt_data)):
        if source is None:
            continue
        if source.startswith(SYNTHETIC_PREFIX):
            if source[len(SYNTHETIC_PREFIX):] not in TASKS:
                raise FlagError(f"{flag} {source!r}: no such synthetic task; the tasks are "
                                f"{', '.join(SYNTHETIC_PREFIX + t for t in TASKS)}")
            continue
        if not os.path.isfile(source):
            raise FlagError(f"{flag} {source!r}: no such file (use a .jsonl/.json/.parquet path or "
                            f"synthetic:arithmetic)")
    held_out = args.eval_prompt_data or args.prompt_data.startswith(SYNTHETIC_PREFIX)
    if args.eval_interval and not held_out:
        raise FlagError(f"--eval-interval {args.eval_interval} needs held-out prompts: give "
                        f"--eval-prompt-data FILE (--prompt-data is a file, whose prompts are "
                        f"not held out)")
    if args.tokenizer_type == "hf" and not args.tokenizer_model:
        raise FlagError("--tokenizer-type hf needs --tokenizer-model PATH (a local folder)")
    if args.tokenizer_model and args.tokenizer_type != "hf":
        raise FlagError(f"--tokenizer-model {args.tokenizer_model!r} is read by --tokenizer-type "
                        f"hf only: add it (--tokenizer-type is {args.tokenizer_type!r})")
    if args.tokenizer_model and not os.path.isdir(args.tokenizer_model):
        raise FlagError(f"--tokenizer-model {args.tokenizer_model!r} is not a directory")
    if args.synthetic_digits < 1:
        raise FlagError("--synthetic-digits must be >= 1")
    try:
        check_template(args.prompt_template, args.tokenizer_type)
        get_reward(args.reward)  # imports a user's module:function now, not at step 1
    except ValueError as err:
        raise FlagError(str(err)) from None


def _checkpoints(args):
    for flag, value in (("--save", args.save), ("--metrics-path", args.metrics_path),
                        ("--load", args.load)):
        if value is not None and not value.strip():  # "$SAVE" of an unset variable
            raise FlagError(f"{flag} is empty: give a path, or drop the flag")
    if args.save is not None and os.path.exists(args.save) and not os.path.isdir(args.save):
        raise FlagError(f"--save {args.save!r} exists and is not a directory")
    if args.metrics_path is not None and os.path.isdir(args.metrics_path):
        raise FlagError(f"--metrics-path {args.metrics_path!r} is a directory; give a file, "
                        f"e.g. {os.path.join(args.metrics_path, 'metrics.jsonl')!r}")
    for flag, value in (("--exit-interval", args.exit_interval),
                        ("--save-interval", args.save_interval)):
        if value and args.save is None:  # the run would stop, or go on, with nothing saved
            raise FlagError(f"{flag} {value} saves checkpoints to --save: add --save DIR")
    if args.pretrained_checkpoint is not None:
        folder = resolve(args.pretrained_checkpoint)
        if not is_megatron(folder):
            raise FlagError(
                f"--pretrained-checkpoint {args.pretrained_checkpoint!r} is not a Megatron "
                f"checkpoint (no {METADATA}, no iter_* folder); convert an HF model first: "
                f"python tools/checkpoint.py hf-to-megatron HF_DIR OUT_DIR")
    if args.load is not None:
        steps = available_steps(args.load)
        one = step_of(args.load)
        if not steps and one is not None:
            raise FlagError(f"--load {args.load!r} is one checkpoint, not a --save folder: "
                            f"--load {os.path.dirname(os.path.normpath(args.load))!r} "
                            f"--ckpt-step {one}")
        if not steps and args.pretrained_checkpoint is None:
            raise FlagError(f"--load {args.load!r} holds no checkpoint (no iter_* folder); "
                            f"check the path, drop --load to start fresh, or give "
                            f"--pretrained-checkpoint to start from a model's weights")
        if args.ckpt_step is not None and args.ckpt_step not in steps:
            raise FlagError(f"--ckpt-step {args.ckpt_step} is not in --load {args.load!r} "
                            f"(available: {', '.join(map(str, steps))})")
    elif args.ckpt_step is not None:
        raise FlagError("--ckpt-step needs --load")
    saved = available_steps(args.save) if args.save is not None else []
    same = (args.load is not None and args.save is not None
            and os.path.realpath(args.load) == os.path.realpath(args.save))
    if saved and not same:  # its steps would be overwritten one by one, its metrics mixed in
        raise FlagError(f"--save {args.save!r} holds another run's checkpoints (steps "
                        f"{', '.join(map(str, saved))}); resume it with --load {args.save!r}, "
                        f"or give a new --save folder")
    for flag, value in (("--wandb-exp-name", args.wandb_exp_name),
                        ("--wandb-save-dir", args.wandb_save_dir)):
        if value is not None and not args.wandb_project:
            raise FlagError(f"{flag} names a wandb run, but nothing logs to wandb without "
                            f"--wandb-project: add it, or drop {flag}")
    if args.wandb_project and importlib.util.find_spec("wandb") is None:
        raise FlagError("--wandb-project needs the wandb package (pip install "
                        "megatron-qarl[wandb]); or drop it: metrics.jsonl has every number")
    if args.save is None and args.metrics_path is None:
        raise FlagError("give --save DIR (checkpoints and metrics) or at least --metrics-path")


def _engine_and_device(args):
    if args.rollout_engine == "sglang" and importlib.util.find_spec("sglang") is None:
        raise FlagError("--rollout-engine sglang needs the sglang package "
                        "(pip install megatron-qarl[sglang]); or use --rollout-engine embedded")
    try:
        check_sglang_flags(args)
    except ValueError as err:
        raise FlagError(str(err)) from None
    if args.device == "cuda" and not torch.cuda.is_available():
        raise FlagError("--device cuda but no CUDA device is visible; use --device cpu")
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cpu" and args.use_distributed_optimizer and args.optimizer == "adam":
        raise FlagError("--use-distributed-optimizer with Adam needs CUDA (megatron-core's "
                        "distributed optimizer only wraps torch.cuda tensors); drop it for "
                        "--device cpu, or shard Muon's state (--optimizer muon)")
    if args.device == "cpu" and args.bf16:
        raise FlagError("--bf16 needs CUDA (megatron-core's mixed-precision optimizer only wraps "
                        "torch.cuda tensors); drop it for --device cpu, which trains in fp32")


def _model(args):
    from .models import (
        check_model_flags,  # imports Megatron; flags above are checked first
    )

    try:
        check_model_flags(args)
    except ValueError as err:
        raise FlagError(str(err)) from None


#: Megatron-LM's choices for --deterministic-mode: reductions whose order NCCL fixes
DETERMINISTIC_NCCL_ALGOS = ("Tree", "Ring", "CollnetDirect", "CollnetChain", "^NVLS")


def _determinism(args, world_size: int):
    if not args.deterministic_mode or args.device != "cuda" or world_size == 1:
        return
    algo = os.environ.get("NCCL_ALGO")
    if algo not in DETERMINISTIC_NCCL_ALGOS:
        raise FlagError(f"--deterministic-mode under torchrun needs NCCL_ALGO set to one of "
                        f"{', '.join(DETERMINISTIC_NCCL_ALGOS)} (got {algo!r}): NVLS reductions "
                        f"do not fix the order of the sum. Export NCCL_ALGO=Ring and relaunch")


def _model_overrides(args):
    """The preset's overrides (unset: None) before anything divides by them."""
    _positive(args, *(name for name in ("num_layers", "hidden_size", "num_experts")
                      if getattr(args, name) is not None))


def validate(args: argparse.Namespace, world_size: int) -> argparse.Namespace:
    """Check and complete `args` in place (derived values: data_parallel_size, device)."""
    _model_overrides(args)
    _engine_and_device(args)
    _determinism(args, world_size)
    args.data_parallel_size = _parallel(args, world_size)
    _batches(args, args.data_parallel_size)
    _numbers(args)
    _lr_schedules(args)
    args.learner_quant = args.rollout_quant if args.aligned_learner else "none"
    _quant(args)
    _data(args)
    _checkpoints(args)
    _model(args)
    return args
