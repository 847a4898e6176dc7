"""Cutting Megatron's fused tensors into their HF parts and back.

linear_qkv rows are grouped per query group: [q_0 .. q_{np/ng-1}, k, v] x head_dim for each
of ng groups. Expert linear_fc1 is [gate; up]. Both functions also work on one
tensor-parallel shard (a rank holds ng/tp whole query groups, and fc1 rank r holds
[gate_r; up_r]), so the SGLang bridge can use them per rank: pass the shard's group count.
"""
from __future__ import annotations

from typing import Tuple

import torch

from ..quant.rows import split_grouped_qkv


def _check_qkv(qkv: torch.Tensor, num_query_groups: int, heads_per_group: int,
               head_dim: int, name: str) -> None:
    rows = num_query_groups * (heads_per_group + 2) * head_dim
    if qkv.dim() != 2 or qkv.shape[0] != rows:
        raise ValueError(
            f"{name}: shape {tuple(qkv.shape)} is not a linear_qkv weight of {num_query_groups} "
            f"query groups x ({heads_per_group} q + k + v heads) x head_dim {head_dim} = {rows} "
            f"rows; check num_attention_heads / num_key_value_heads / head_dim in the config"
        )


def split_qkv(qkv: torch.Tensor, num_query_groups: int, heads_per_group: int,
              head_dim: int, name: str = "linear_qkv.weight") -> Tuple[torch.Tensor, ...]:
    """[ng*(np/ng+2)*hd, h] -> q [np*hd, h], k [ng*hd, h], v [ng*hd, h]."""
    _check_qkv(qkv, num_query_groups, heads_per_group, head_dim, name)
    return tuple(split_grouped_qkv(qkv, num_query_groups, heads_per_group, head_dim))


def merge_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, num_query_groups: int,
              head_dim: int) -> torch.Tensor:
    """Inverse of split_qkv."""
    hidden = q.shape[-1]
    if k.shape != v.shape or q.shape[0] % (num_query_groups * head_dim) or \
            k.shape[0] != num_query_groups * head_dim or k.shape[-1] != hidden:
        raise ValueError(
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} do not form "
            f"{num_query_groups} query groups of head_dim {head_dim}; check "
            f"num_key_value_heads and head_dim in the config"
        )
    heads_per_group = q.shape[0] // (num_query_groups * head_dim)
    parts = [q.reshape(num_query_groups, heads_per_group, head_dim, hidden),
             k.reshape(num_query_groups, 1, head_dim, hidden),
             v.reshape(num_query_groups, 1, head_dim, hidden)]
    return torch.cat(parts, dim=1).reshape(-1, hidden)


def split_fc1(fc1: torch.Tensor, name: str = "linear_fc1.weight") -> Tuple[torch.Tensor, ...]:
    """[2*ffn, h] -> gate [ffn, h], up [ffn, h]."""
    if fc1.shape[-2] % 2:
        raise ValueError(f"{name}: {fc1.shape[-2]} rows cannot be [gate; up] halves")
    return tuple(torch.chunk(fc1, 2, dim=-2))


def merge_fc1(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """Inverse of split_fc1."""
    if gate.shape != up.shape:
        raise ValueError(f"gate {tuple(gate.shape)} and up {tuple(up.shape)} differ in shape")
    return torch.cat([gate, up], dim=-2)
