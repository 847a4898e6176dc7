"""Full tensors from Megatron shards, gathered over Megatron-Core's own process groups to the
one rank that sends (dense: tensor-parallel rank 0 of data-parallel replica 0; experts:
expert-TP rank 0 and expert-parallel rank 0 of expert-data-parallel replica 0; with
pipeline size 1 both are global rank 0). Ranks off that path do no work; ranks on it send
their shard and keep nothing. Tensors travel as bytes, so any dtype (int32 codes, fp8, bf16
scales) goes over gloo and NCCL alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.distributed as dist

from ...quant import QuantizedWeight
from .params import ShardedParam
from ...quant.rows import Weight, cat, interleaved_halves

PP_FLAG = "--pipeline-model-parallel-size"


@dataclass
class ParallelGroups:
    """The groups a publish gathers over (None = size 1) and this rank's place in them."""

    tp: Optional[dist.ProcessGroup]
    etp: Optional[dist.ProcessGroup]
    ep: Optional[dist.ProcessGroup]
    dense_replica: bool  # data-parallel rank 0: its copy of dense weights is published
    expert_replica: bool  # expert-data-parallel rank 0

    @classmethod
    def from_megatron(cls) -> "ParallelGroups":
        from megatron.core import parallel_state as ps

        if ps.get_pipeline_model_parallel_world_size() > 1:
            raise ValueError(
                f"publishing to SGLang supports {PP_FLAG} 1 only (one sending rank per model); "
                f"use tensor/expert parallelism instead of pipeline stages for RL training")
        return cls(
            tp=ps.get_tensor_model_parallel_group(),
            etp=ps.get_expert_tensor_parallel_group(),
            ep=ps.get_expert_model_parallel_group(),
            dense_replica=ps.get_data_parallel_rank(with_context_parallel=True) == 0,
            expert_replica=ps.get_expert_data_parallel_rank() == 0,
        )

    def is_sender(self) -> bool:
        """The rank that ends up with every full tensor."""
        return (self.dense_replica and self.expert_replica and _rank(self.tp) == 0
                and _rank(self.etp) == 0 and _rank(self.ep) == 0)


def _size(group) -> int:
    return 1 if group is None else dist.get_world_size(group)


def _rank(group) -> int:
    return 0 if group is None else dist.get_rank(group)


def _gather_bytes(t: torch.Tensor, group) -> Optional[List[torch.Tensor]]:
    """Every member's equally shaped tensor on group rank 0 (None elsewhere)."""
    flat = t.contiguous().view(-1).view(torch.uint8)
    dst = dist.get_global_rank(group, 0)
    bufs = [torch.empty_like(flat) for _ in range(_size(group))] if _rank(group) == 0 else None
    dist.gather(flat, bufs, dst=dst, group=group)
    if bufs is None:
        return None
    return [b.view(t.dtype).view(t.shape) for b in bufs]


def _gather(value: Weight, group) -> Optional[List[Weight]]:
    if _size(group) == 1:
        return [value]
    if isinstance(value, torch.Tensor):
        return _gather_bytes(value, group)
    datas = _gather_bytes(value.data, group)
    scales = None if value.scale is None else _gather_bytes(value.scale, group)
    if datas is None:
        return None
    scales = scales or [None] * len(datas)
    return [QuantizedWeight(d, s, value.shape, value.scheme) for d, s in zip(datas, scales)]


def gather_full(param: ShardedParam, groups: ParallelGroups
                ) -> Optional[List[Tuple[int, Weight]]]:
    """[(expert_offset, full tensor)] on the sending rank: one entry for a dense weight, one
    per expert-parallel rank for an expert weight (its local expert index + offset is the
    global one). None on every other rank. Every rank must call this for every param in the
    same order (collectives)."""
    part = param.partition
    if not (part.expert and groups.expert_replica or not part.expert and groups.dense_replica):
        return None
    tp_group = groups.etp if part.expert else groups.tp
    value = param.value
    if part.tp_dim is not None and _size(tp_group) > 1:
        shards = _gather(value, tp_group)
        if shards is None:
            return None
        value = interleaved_halves(shards) if part.tp_stride == 2 else cat(shards, part.tp_dim)
    elif _rank(tp_group) != 0:
        return None  # a replicated copy: tensor-parallel rank 0 sends it
    if not part.expert:
        return [(0, value)]
    per_rank = _gather(value, groups.ep)
    if per_rank is None:
        return None
    return [(r * part.experts_per_rank, v) for r, v in enumerate(per_rank)]
