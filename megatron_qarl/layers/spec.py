"""The Megatron layer spec of a QaRL model: Megatron's local spec with torch norms that allow
sequence parallelism, and the quantized modules swapped in for the selected targets.

Targets: 'experts' (routed experts: what SGLang quantizes in place), 'attention' (linear_qkv,
linear_proj), 'mlp' (dense-layer fc1/fc2, for models with dense layers). The router,
embeddings, output layer and norms always stay full precision.
"""
from __future__ import annotations

import copy

from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.transformer.spec_utils import ModuleSpec
from megatron.core.transformer.transformer_block import TransformerBlockSubmodules

from ..compat import TorchNorm
from ..quant import NoQuant, QuantScheme
from .experts import QuantizedGroupedExperts
from .kv_cache import PositionedCacheSelfAttention
from .layout import TARGETS_FLAG
from .linear import QuantColumnParallelLinear, QuantRowParallelLinear
from .sdpa_attention import ATTENTION_BACKENDS, BACKEND_FLAG, SDPAttention

TARGETS = ("experts", "attention", "mlp")


def parse_targets(text: str) -> frozenset:
    """'experts', 'experts+attention', ... (the --quant-targets value) -> a set of targets."""
    targets = frozenset(t for t in text.split("+") if t)
    unknown = targets - set(TARGETS)
    if unknown or not targets:
        raise ValueError(
            f"{TARGETS_FLAG} {text!r}: expected '+'-joined names from {', '.join(TARGETS)} "
            f"(e.g. 'experts' or 'experts+attention')"
        )
    return targets


def _quantized(module: type, scheme: QuantScheme, submodules=None, **params) -> ModuleSpec:
    return ModuleSpec(module=module, params={"scheme": scheme, **params}, submodules=submodules)


def qarl_block_spec(config, scheme: QuantScheme, targets: frozenset,
                    keep_operand: bool = False, attention_backend: str = "local",
                    grouped_experts: bool = False) -> TransformerBlockSubmodules:
    """One spec for every layer (Megatron shares it: a swap applies to all layers).
    keep_operand: the experts keep their dequantized operand per step (QuantizedWeight).
    attention_backend: 'local' (Megatron's DotProductAttention) or 'sdpa' (SDPAttention).
    grouped_experts: experts that `targets` leaves in bf16 run as grouped GEMMs (scheme
    'none' QuantizedGroupedExperts) instead of Megatron's SequentialMLP."""
    if attention_backend not in ATTENTION_BACKENDS:
        raise ValueError(f"{BACKEND_FLAG} must be one of {', '.join(ATTENTION_BACKENDS)}, got "
                         f"{attention_backend!r}")
    freq = config.moe_layer_freq
    if config.num_moe_experts and not (freq == 1 or isinstance(freq, list) and all(freq)):
        raise ValueError(f"moe_layer_freq {freq!r}: this spec makes every layer an MoE layer "
                         f"(Qwen3-MoE's); dense layers between them are not built")
    layer = copy.deepcopy(get_gpt_layer_local_spec(
        num_experts=config.num_moe_experts, moe_grouped_gemm=False,
        qk_layernorm=config.qk_layernorm, normalization=config.normalization,
    ))
    sub = layer.submodules
    sub.input_layernorm = sub.pre_mlp_layernorm = TorchNorm
    sub.self_attention.module = PositionedCacheSelfAttention  # the embedded engine's cache
    attention = sub.self_attention.submodules
    if attention_backend == "sdpa":
        attention.core_attention = SDPAttention
    if config.qk_layernorm:
        attention.q_layernorm = attention.k_layernorm = TorchNorm
    if "attention" in targets:
        attention.linear_qkv = _quantized(QuantColumnParallelLinear, scheme)
        attention.linear_proj = _quantized(QuantRowParallelLinear, scheme)
    mlp = sub.mlp.submodules
    if config.num_moe_experts and ("experts" in targets or grouped_experts):
        mlp.experts = _quantized(QuantizedGroupedExperts,
                                 scheme if "experts" in targets else NoQuant(),
                                 mlp.experts.submodules, keep_operand=keep_operand)
    if not config.num_moe_experts and "mlp" in targets:
        mlp.linear_fc1 = _quantized(QuantColumnParallelLinear, scheme)
        mlp.linear_fc2 = _quantized(QuantRowParallelLinear, scheme)
    return TransformerBlockSubmodules(layer_specs=[layer] * config.num_layers,
                                      layer_norm=TorchNorm)
