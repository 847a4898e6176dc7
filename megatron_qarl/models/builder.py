"""The one entry point that turns a Megatron GPT config into a QaRL model for a scheme.

Layer spec, not a converter pass: Megatron's `ModuleSpec` is its own extension point, and a
spec builds the quantized modules right the first time, under every TP/EP/expert-TP layout,
with Megatron's initialisation, parameter attributes and `sharded_state_dict`, before the
trainer wraps the model in DDP and builds the optimizer. A converter (torchtitan's float8
style) would walk a built model and swap modules afterwards: experts would be built twice
(SequentialMLP, then ours), parameters moved between modules, and the pass ordered by hand
against DDP's contiguous grad buffers. What a converter adds, the optimizer post-step hook,
is a separate call here (`install_quant_refresh_hook`), which the trainer makes after it has
built the optimizer.
"""
from __future__ import annotations

from typing import Union

import torch
from megatron.core.models.gpt import GPTModel
from megatron.core.transformer import TransformerConfig

from ..compat import apply_megatron_fixes, reduce_expert_grads_over_expert_dp
from ..layers import (configure_token_dispatchers, enable_cuda_kernels,
                      keep_router_probs_fp32, parse_targets, qarl_block_spec, validate_model)
from ..layers.layout import KEEP_OPERAND_FLAG
from ..quant import W4A16, NoQuant, QuantScheme, get_scheme


def build_model(config: TransformerConfig, scheme: Union[str, QuantScheme] = "none", *,
                vocab_size: int, max_sequence_length: int, rotary_base: float = 1e6,
                targets: str = "experts", quantize: bool = True, pre_process: bool = True,
                post_process: bool = True, cuda_kernels: bool = True,
                keep_operand: bool = False, attention_backend: str = "local",
                grouped_experts: bool = False) -> GPTModel:
    """A Megatron GPTModel (local spec, RoPE, untied embeddings) whose `targets` run the
    aligned forward of `scheme`. Scheme 'none' or quantize=False gives the plain model with
    Megatron's own layers. Layout errors (groups straddling shards, experts vs EP) are raised
    here, before any weight is allocated. On a GPU the Triton kernels replace the reference
    ops when they are installed (cuda_kernels=False keeps the reference, for benchmarks).
    keep_operand: W4A16 experts keep their dequantized bf16 operand for the optimizer step
    (2 B/param of the quantized experts; the kernels then dequantize once per step).
    attention_backend: 'local' (Megatron's DotProductAttention) or 'sdpa' (torch's
    scaled_dot_product_attention: memory linear in the sequence, layers/sdpa_attention.py).
    grouped_experts: bf16 experts (scheme 'none', or not among the targets) run one grouped
    GEMM per projection (layers/experts.py) instead of Megatron's SequentialMLP loop."""
    apply_megatron_fixes()
    if config.pipeline_model_parallel_size != 1:  # the block spec holds every layer
        raise ValueError(f"pipeline_model_parallel_size {config.pipeline_model_parallel_size}: "
                         f"the quantized block spec builds all num_layers on each rank; "
                         f"pipeline parallelism is not supported (use 1)")
    if cuda_kernels and torch.cuda.is_available() and not config.use_cpu_initialization:
        enable_cuda_kernels()
    scheme = get_scheme(scheme) if isinstance(scheme, str) else scheme
    chosen = parse_targets(targets)
    if not quantize or isinstance(scheme, NoQuant):
        chosen = frozenset()
    validate_model(config, scheme, chosen)
    if keep_operand and not (isinstance(scheme, W4A16) and "experts" in chosen):
        raise ValueError(
            f"keep_operand ({KEEP_OPERAND_FLAG}) keeps the operand of quantized W4A16 experts, "
            f"but this model quantizes no experts with W4A16 (scheme {scheme.name}, targets "
            f"{targets!r}, quantize={quantize}): drop it, or quantize the experts with w4a16")
    model = GPTModel(
        config=config,
        transformer_layer_spec=qarl_block_spec(config, scheme, chosen, keep_operand,
                                               attention_backend, grouped_experts),
        vocab_size=vocab_size,
        max_sequence_length=max_sequence_length,
        pre_process=pre_process,
        post_process=post_process,
        share_embeddings_and_output_weights=False,
        position_embedding_type="rope",
        rotary_percent=1.0,
        rotary_base=rotary_base,
    )
    configure_token_dispatchers(model)
    keep_router_probs_fp32(model)
    reduce_expert_grads_over_expert_dp(model)
    return model
