"""What SGLang/vLLM load: per-linear serving tensors under HF names, and the config.json
`quantization_config` block (shared/reference/formats.md)."""
from __future__ import annotations

import copy

import torch

from .base import QuantScheme
from .errors import QuantizationError
from .fp8_block import BLOCK, FP8Block
from .int8 import Int8W8A8
from .none import NoQuant
from .w4a16 import W4A16

# Modules SGLang keeps in bf16 for a Qwen3-MoE weight update: only routed experts are quantized.
W4A16_IGNORE = ["re:.*lm_head.*", "re:.*norm.*", "re:.*embed.*", "re:.*self_attn.*",
                "re:.*mlp\\.gate\\.*"]
FP8_NOT_CONVERTED = ["lm_head", "embed_tokens", "mlp.gate", "norm"]


def require(tensors: dict, key: str, dtype: torch.dtype = None) -> torch.Tensor:
    if key not in tensors:
        raise QuantizationError(
            f"missing tensor {key!r}: the checkpoint was exported with another scheme or is "
            f"incomplete (re-export it with tools/)"
        )
    t = tensors[key]
    if dtype is not None and t.dtype != dtype:
        raise QuantizationError(f"{key}: dtype {t.dtype}, expected {dtype}")
    return t


def to_serving(qweights: dict) -> dict:
    """{hf_linear_prefix: QuantizedWeight} -> flat {tensor_name: tensor}."""
    out = {}
    for prefix, qw in qweights.items():
        out.update(qw.scheme.serving_tensors(prefix, qw))
    return out


def from_serving(scheme: QuantScheme, tensors: dict, prefixes) -> dict:
    """Flat serving tensors -> {prefix: QuantizedWeight} for the given linears."""
    return {p: scheme.from_serving_tensors(p, tensors) for p in prefixes}


def quantization_config(scheme: QuantScheme, quantize_attention: bool = False) -> dict:
    """The config.json `quantization_config` that makes SGLang/vLLM load our tensors."""
    if isinstance(scheme, W4A16):
        ignore = [p for p in W4A16_IGNORE if not (quantize_attention and "self_attn" in p)]
        return {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "quantization_status": "compressed",
            "kv_cache_scheme": None,
            "config_groups": {"group_0": {
                "targets": ["Linear"],
                "input_activations": None,
                "output_activations": None,
                "weights": {"num_bits": 4, "type": "int", "symmetric": True,
                            "strategy": "group", "group_size": scheme.group_size,
                            "actorder": None, "dynamic": False, "observer": "minmax",
                            "observer_kwargs": {}, "block_structure": None},
            }},
            "ignore": copy.copy(ignore),
        }
    if isinstance(scheme, FP8Block):
        return {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                "weight_block_size": [BLOCK, BLOCK],
                "modules_to_not_convert": list(FP8_NOT_CONVERTED)}
    if isinstance(scheme, Int8W8A8):
        return {"quant_method": "w8a8_int8"}
    if isinstance(scheme, NoQuant):
        raise QuantizationError("scheme 'none' has no quantization_config: export plain bf16")
    raise QuantizationError(f"no serving config for scheme {scheme}")
