"""Concatenate and split a weight along its logical out (rows) / in (columns) dims, whether it
is a plain tensor or a QuantizedWeight (codes plus scales of any scheme).

A QuantizedWeight's data and scale are cut at the positions of the logical cut, scaled by
each component's granularity (W4A16 packs 8 codes per int32 column and has one scale per
group; FP8 has one scale per 128x128 block). A cut inside a granule is refused: it would mix
values quantized together. INT8's per-row scale spans the whole input dim, so input-dim
shards must carry the same scale.
"""
from __future__ import annotations

from typing import List, Sequence, Union

import torch

from .base import QuantizedWeight
from .int8 import Int8W8A8

Weight = Union[torch.Tensor, QuantizedWeight]


class ReshardError(ValueError):
    """A shard layout the serving format cannot express."""


def _component_dim(component: torch.Tensor, dim: int) -> int:
    return component.dim() - 2 + dim  # dim 0 = out, 1 = in, of the last two dims


def _row_granule(value: QuantizedWeight, component: torch.Tensor) -> int:
    """Rows per row of `component`: 1 where it has a row per output row (codes, per-row and
    per-group scales), else the scheme's scale block (FP8's 128; its last block may be
    partial, so the shapes alone cannot tell: 300 rows have 3 scale rows, blocks of 128)."""
    rows = value.shape[-2]
    return 1 if component.shape[_component_dim(component, 0)] == rows \
        else value.scheme.scale_block_rows


def cat(parts: Sequence[Weight], dim: int) -> Weight:
    """Concatenate along logical dim 0 (out) or 1 (in)."""
    if isinstance(parts[0], torch.Tensor):
        return torch.cat(list(parts), dim=parts[0].dim() - 2 + dim)
    first = parts[0]
    block = first.scheme.scale_block_rows  # FP8's blocks are square: as many columns
    sizes = [p.shape[-2 + dim] for p in parts]
    if any(size % block for size in sizes[:-1]):
        unit = ("rows", "columns")[dim]
        raise ReshardError(
            f"{first.scheme.name}: parts of {sizes} {unit}; all but the last must be whole "
            f"{block}-{unit[:-1]} quantization blocks")
    shape = list(first.shape)
    shape[len(shape) - 2 + dim] = sum(p.shape[len(shape) - 2 + dim] for p in parts)
    data = torch.cat([p.data for p in parts], dim=_component_dim(first.data, dim))
    scale = None
    if first.scale is not None:
        d = _component_dim(first.scale, dim)
        if dim == 1 and isinstance(first.scheme, Int8W8A8):  # one scale per whole row
            if any(not torch.equal(p.scale, first.scale) for p in parts[1:]):
                raise ReshardError(
                    f"{first.scheme.name}: the scale is shared along the split dim but the "
                    f"shards carry different scales; quantize this linear unsplit "
                    f"(--tensor-model-parallel-size 1 for it)")
            scale = first.scale
        else:
            scale = torch.cat([p.scale for p in parts], dim=d)
    return QuantizedWeight(data, scale, tuple(shape), first.scheme)


def split_rows(value: Weight, sizes: Sequence[int]) -> List[Weight]:
    """Split along logical dim 0 (out) into consecutive pieces of `sizes` rows."""
    if isinstance(value, torch.Tensor):
        return list(torch.split(value, list(sizes), dim=value.dim() - 2))
    rows = value.shape[-2]
    if sum(sizes) != rows:
        raise ReshardError(f"cannot split {rows} rows into {list(sizes)}")

    def cut(component):
        if component is None:
            return [None] * len(sizes)
        d = _component_dim(component, 0)
        g = _row_granule(value, component)
        if any(s % g for s in sizes[:-1]):
            raise ReshardError(
                f"{value.scheme.name}: rows {list(sizes)} cut through a {g}-row quantization "
                f"block; this tensor-parallel / fused layout cannot be served (see "
                f"megatron_qarl/layers/layout.py)")
        return list(torch.split(component, [-(-s // g) for s in sizes], dim=d))

    out = []
    for s, data, scale in zip(sizes, cut(value.data), cut(value.scale)):
        shape = list(value.shape)
        shape[-2] = s
        out.append(QuantizedWeight(data, scale, tuple(shape), value.scheme))
    return out


def interleaved_halves(shards: Sequence[Weight]) -> Weight:
    """Merge column-parallel shards of a stride-2 tensor ([gate_r; up_r] on rank r) into
    [gate; up]."""
    halves = [split_rows(s, [s.shape[-2] // 2] * 2) for s in shards]
    return cat([h[0] for h in halves] + [h[1] for h in halves], dim=0)


def split_grouped_qkv(qkv: Weight, num_groups: int, heads_per_group: int,
                      head_dim: int) -> List[Weight]:
    """Megatron's linear_qkv rows [q_0..q_{hpg-1}, k, v] x head_dim per query group ->
    [q, k, v], for plain tensors and quantized weights alike (checkpoint/fused_tensors.split_qkv
    adds the config check around it)."""
    expected = num_groups * (heads_per_group + 2) * head_dim
    if qkv.shape[-2] != expected:
        raise ReshardError(
            f"linear_qkv has {qkv.shape[-2]} rows, expected {expected} for {num_groups} "
            f"query groups of {heads_per_group} heads x head_dim {head_dim}")
    pieces = split_rows(qkv, [heads_per_group * head_dim, head_dim, head_dim] * num_groups)
    return [cat(pieces[i::3], dim=0) for i in range(3)]
