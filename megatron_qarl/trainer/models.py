"""The learner (Megatron DDP around the QaRL GPTModel) and, when the rollout scheme differs
from the learner's, the rollout engine's own model of the same config."""
from __future__ import annotations

import torch
from megatron.core.transformer.module import Float16Module

from ..checkpoint.model_preset import hf_config_from_preset
from ..layers import parse_targets, validate_model
from ..layers.layout import check_expert_parallel
from ..models import build_model, get_preset
from ..quant import get_scheme
from .validation import FlagError


def padded_vocab(vocab_size: int, divisible_by: int, tp: int) -> int:
    multiple = divisible_by * tp
    return -(-vocab_size // multiple) * multiple


def model_vocab_rows(args, tokenizer_vocab: int) -> int:
    """Rows of the embedding and output layer. A pretrained tokenizer (--tokenizer-type hf)
    comes with its model, whose checkpoint has the preset's rows (Qwen3: 151936 rows for 151669
    tokens): keep them, so HF checkpoints load and exports serve with the same shapes. The
    built-in char tokenizer trains from scratch on a compact, padded vocabulary."""
    tp = args.tensor_model_parallel_size
    if args.tokenizer_type != "hf":
        return padded_vocab(tokenizer_vocab, args.make_vocab_size_divisible_by, tp)
    rows = get_preset(args.model).vocab_size
    if tokenizer_vocab > rows:
        raise FlagError(
            f"--tokenizer-model has {tokenizer_vocab} tokens but --model {args.model} has "
            f"{rows} embedding rows: use the tokenizer that belongs to the model")
    if rows % tp:
        raise FlagError(f"--model {args.model} has {rows} embedding rows, not divisible by "
                        f"--tensor-model-parallel-size {tp}: pick a TP size that divides it")
    return rows


def model_config(args, *, use_cpu_initialization: bool):
    """(preset, TransformerConfig) from --model and its overrides."""
    preset = get_preset(args.model)
    overrides = {k: getattr(args, k) for k in ("num_layers", "hidden_size", "num_experts")
                 if getattr(args, k) is not None}
    if args.moe_aux_loss_coeff is not None:
        overrides["router_aux_loss_coef"] = args.moe_aux_loss_coeff
    preset = preset.replace(**overrides)
    config = preset.transformer_config(
        tp=args.tensor_model_parallel_size, ep=args.expert_model_parallel_size,
        etp=args.expert_tensor_parallel_size,
        params_dtype=torch.bfloat16 if args.bf16 else torch.float32,
        use_cpu_initialization=use_cpu_initialization,
        sequence_parallel=args.sequence_parallel,
        deterministic_mode=args.deterministic_mode,
        # RouterReplay in every router, so the forwards can take the engine's routes
        moe_enable_routing_replay=args.rollout_routing_replay,
    )
    return preset, config


def model_hf_config(args, vocab: int) -> dict:
    """The HF config.json of the model these flags build (with its vocabulary rows): what the
    SGLang engine serves and what a checkpoint's hf_assets/ holds for the export tools."""
    preset, _ = model_config(args, use_cpu_initialization=True)
    return {**hf_config_from_preset(preset), "vocab_size": vocab}


def check_model_flags(args) -> None:
    """Layout errors (W4A16 groups vs TP shards, experts vs EP) before any process starts."""
    _, config = model_config(args, use_cpu_initialization=True)
    if config.num_moe_experts < config.moe_router_topk:
        raise ValueError(f"--num-experts {config.num_moe_experts} is below the {args.model} "
                         f"router's top-k {config.moe_router_topk}: give at least that many")
    check_expert_parallel(config)  # validate_model's first check, for bf16 runs too
    targets = parse_targets(args.quant_targets)
    if args.rollout_quant != "none":
        validate_model(config, get_scheme(args.rollout_quant), targets)


def build_policy(args, scheme: str, vocab_size: int, device, keep_operand: bool = False):
    """keep_operand: the learner's --quant-keep-operand (not for a rollout-only model)."""
    preset, config = model_config(args, use_cpu_initialization=device.type == "cpu")
    model = build_model(config, scheme, vocab_size=vocab_size,
                        max_sequence_length=max(args.seq_length, 1),
                        rotary_base=preset.rope_theta, targets=args.quant_targets,
                        keep_operand=keep_operand, attention_backend=args.attention_backend,
                        grouped_experts=args.moe_grouped_gemm).to(device)
    if args.bf16:
        model = Float16Module(config, model)
    return model, config
