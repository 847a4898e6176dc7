"""Where each HF tensor lives in a Megatron-Core distributed checkpoint (torch_dist format).

A distributed checkpoint stores global tensors, independent of TP/EP: Megatron stacks the
decoder layers (and the experts) as leading dims of one tensor per key, and each rank loads
the slices its TP/EP rank needs. So one checkpoint serves every TP/EP layout. Keys are those
of megatron-core 0.16.1's local-spec GPTModel `sharded_state_dict()` (input_layernorm is
stored under the TE-compatible `linear_qkv.layer_norm_weight` key); the tests load the
written checkpoint into real models with strict key checking, at TP=1 and TP=2/EP=2.

A chunk is one slice of a key (one layer, or one layer's expert) made of 1-3 HF tensors.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

from .fused_tensors import merge_fc1, merge_qkv, split_fc1, split_qkv
from .hf_config import Qwen3MoeDims
from .hf_names import EXPERT, LAYER, TOP_LEVEL, hf_expert_prefix, hf_layer_prefix, hf_top_names

LAYERS = "decoder.layers."
#: per-layer Megatron module suffix -> sharded key suffix, where they differ
SHARDED_KEY = {
    "input_layernorm.weight": "self_attention.linear_qkv.layer_norm_weight",
    "pre_mlp_layernorm.weight": "mlp.linear_fc1.layer_norm_weight",
}
EXPERTS = "mlp.experts.experts."
#: linears whose `_extra_state` Megatron saves as a ShardedObject (None for local linears)
EXTRA_STATE_LINEARS = ("self_attention.linear_qkv", "self_attention.linear_proj")


@dataclass(frozen=True)
class Chunk:
    """One layer's (or one layer's expert's) slice of a stacked Megatron tensor, and the HF
    tensors it is made of."""

    key: str
    global_shape: Tuple[int, ...]
    offset: Tuple[int, ...]
    tensor_shape: Tuple[int, ...]  # of the one layer's (expert's) Megatron tensor
    hf_names: Tuple[str, ...]  # stacking order: q,k,v / gate,up / the one tensor
    fused: Optional[str]  # "qkv", "fc1" or None

    @property
    def shape(self) -> Tuple[int, ...]:
        """The chunk in the global tensor: size 1 along each stacked (layer, expert) dim."""
        stacked = len(self.global_shape) - len(self.tensor_shape)
        return (1,) * stacked + self.tensor_shape

    @property
    def numel(self) -> int:
        return math.prod(self.tensor_shape)

    def rank_offsets(self) -> List[Tuple[int, int, int]]:
        """(axis, index, count) per stacked axis: the form of ShardedTensor.from_rank_offsets."""
        return [(axis, off, total) for axis, (off, size, total)
                in enumerate(zip(self.offset, self.shape, self.global_shape)) if total != size]


@dataclass(frozen=True)
class ExtraState:
    """A ShardedObject slot (a linear's `_extra_state`), global offset within global shape."""

    key: str
    global_shape: Tuple[int, ...]
    offset: Tuple[int, ...]


def _fused_kind(hf_suffixes: Tuple[str, ...]) -> Optional[str]:
    return {3: "qkv", 2: "fc1", 1: None}[len(hf_suffixes)]


def _megatron_shape(dims: Qwen3MoeDims, hf_names: Tuple[str, ...]) -> Tuple[int, ...]:
    shapes = [dims.hf_shape(n) for n in hf_names]
    return (sum(s[0] for s in shapes),) + shapes[0][1:]


def top_chunks(dims: Qwen3MoeDims) -> List[Chunk]:
    out, names = [], hf_top_names(dims.tied_embeddings)
    for key, hf in TOP_LEVEL.items():
        if hf not in names:
            continue
        shape = dims.hf_shape(hf)
        out.append(Chunk(key, shape, (0,) * len(shape), shape, (hf,), None))
    return out


def layer_chunks(dims: Qwen3MoeDims, layer: int) -> List[Chunk]:
    """All chunks of decoder layer `layer`: attention, norms, router, then every expert."""
    L, E = dims.num_layers, dims.num_experts
    out = []
    for suffix, hf_suffixes in LAYER.items():
        names = tuple(hf_layer_prefix(layer) + s for s in hf_suffixes)
        shape = _megatron_shape(dims, names)
        key = LAYERS + SHARDED_KEY.get(suffix, suffix)
        out.append(Chunk(key, (L,) + shape, (layer,) + (0,) * len(shape), shape, names,
                         _fused_kind(hf_suffixes)))
    for expert in range(E):
        for linear, hf_suffixes in EXPERT.items():
            names = tuple(hf_expert_prefix(layer, expert) + s for s in hf_suffixes)
            shape = _megatron_shape(dims, names)
            out.append(Chunk(LAYERS + EXPERTS + linear, (L, E) + shape,
                             (layer, expert) + (0,) * len(shape), shape, names,
                             _fused_kind(hf_suffixes)))
    return out


def all_chunks(dims: Qwen3MoeDims) -> List[Chunk]:
    return top_chunks(dims) + [c for i in range(dims.num_layers) for c in layer_chunks(dims, i)]


def extra_states(dims: Qwen3MoeDims) -> List[ExtraState]:
    L, E = dims.num_layers, dims.num_experts
    out = [ExtraState(f"{LAYERS}{linear}._extra_state", (L,), (i,))
           for linear in EXTRA_STATE_LINEARS for i in range(L)]
    out += [ExtraState(f"{LAYERS}{EXPERTS}{linear.replace('.weight', '')}._extra_state",
                       (L, E), (i, e))
            for linear in EXPERT for i in range(L) for e in range(E)]
    return out


def chunk_from_hf(chunk: Chunk, tensors: Dict[str, torch.Tensor],
                  dims: Qwen3MoeDims) -> torch.Tensor:
    """The chunk's data from its HF tensors (fused ones merged), shaped like the chunk."""
    parts = [tensors[n] for n in chunk.hf_names]
    if chunk.fused == "qkv":
        data = merge_qkv(*parts, dims.num_kv_heads, dims.head_dim)
    elif chunk.fused == "fc1":
        data = merge_fc1(*parts)
    else:
        data = parts[0]
    return data.reshape(chunk.shape)


def hf_from_chunk(chunk: Chunk, data: torch.Tensor, dims: Qwen3MoeDims) -> Dict[str, torch.Tensor]:
    """Inverse of chunk_from_hf: {hf_name: tensor}."""
    data = data.reshape(chunk.tensor_shape)
    if chunk.fused == "qkv":
        parts = split_qkv(data, dims.num_kv_heads, dims.heads_per_group, dims.head_dim,
                          chunk.key)
    elif chunk.fused == "fc1":
        parts = split_fc1(data, chunk.key)
    else:
        parts = (data,)
    return {n: p.contiguous() for n, p in zip(chunk.hf_names, parts)}
