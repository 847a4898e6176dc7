"""A full Megatron tensor -> the serving tensors an engine loads, under HF names: fused
linear_qkv / fc1 cut into q,k,v / gate,up, QuantizedWeights expanded into their checkpoint
tensors (W4A16: weight_packed, weight_scale, weight_shape), padded vocab rows dropped.
Names come from checkpoint/hf_names.py, the project's one Megatron<->HF mapping."""
from __future__ import annotations

from typing import Dict

import torch

from ...checkpoint.hf_config import Qwen3MoeDims
from ...checkpoint.hf_names import megatron_to_hf
from ...quant.rows import Weight, split_grouped_qkv, split_rows

VOCAB_ROWS = ("model.embed_tokens.weight", "lm_head.weight")


def _parts(value: Weight, count: int, dims: Qwen3MoeDims):
    if count == 3:
        return split_grouped_qkv(value, dims.num_kv_heads, dims.heads_per_group, dims.head_dim)
    if count == 2:
        return split_rows(value, [value.shape[-2] // 2] * 2)
    return [value]


def to_hf_tensors(name: str, value: Weight, dims: Qwen3MoeDims,
                  expert_offset: int = 0) -> Dict[str, torch.Tensor]:
    names = megatron_to_hf(name, expert_offset)
    out = {}
    for hf_name, part in zip(names, _parts(value, len(names), dims)):
        if isinstance(part, torch.Tensor):
            if hf_name in VOCAB_ROWS:
                part = part[: dims.vocab]  # Megatron pads the vocab to a multiple of TP
            out[hf_name] = part.contiguous()
        else:
            prefix = hf_name[: -len(".weight")]
            out.update({k: t.contiguous()
                        for k, t in part.scheme.serving_tensors(prefix, part).items()})
    return out
