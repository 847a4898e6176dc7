"""What the publisher reads from the learner: each tensor a rank holds, under its Megatron
name, with how it is partitioned. Quantized modules contribute their cached QuantizedWeight
(the codes the learner trained against, never re-quantized here); other parameters their
bf16 tensor."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional, Union

import torch

from ...quant import QuantizedWeight

_LOCAL_EXPERT = re.compile(r"\.mlp\.experts\.local_experts\.\d+\.")
_GROUPED_EXPERT = re.compile(r"\.mlp\.experts\.linear_fc[12]\.weight\d+$")


@dataclass(frozen=True)
class Partition:
    """How one rank's tensor relates to the full one.

    tp_dim: logical dim split over tensor parallel (expert-TP for experts); None if whole.
    tp_stride: 2 for column-parallel GLU fc1 (rank r holds [gate_r; up_r]).
    experts_per_rank: for expert weights, the local expert count (global index =
    ep_rank * experts_per_rank + local index); None for dense weights.
    """

    tp_dim: Optional[int] = None
    tp_stride: int = 1
    experts_per_rank: Optional[int] = None

    @property
    def expert(self) -> bool:
        return self.experts_per_rank is not None


@dataclass
class ShardedParam:
    name: str  # Megatron name; experts as `...mlp.experts.local_experts.{local}.linear_fc1.weight`
    value: Union[torch.Tensor, QuantizedWeight]
    partition: Partition


def _partition(name: str, param: torch.Tensor, experts_per_rank: Optional[int]) -> Partition:
    split = getattr(param, "tensor_model_parallel", False)
    tp_dim = getattr(param, "partition_dim", None) if split else None
    if tp_dim is not None:
        tp_dim = tp_dim - param.dim() + 2  # logical: 0 = out, 1 = in (embeddings: vocab rows)
    expert = experts_per_rank if _LOCAL_EXPERT.search("." + name) else None
    return Partition(tp_dim, getattr(param, "partition_stride", 1) if split else 1, expert)


def _strip_wrappers(name: str) -> str:
    while name.startswith("module."):
        name = name[len("module."):]
    return name


def model_params(model) -> Iterator[ShardedParam]:
    """Every tensor of a local-spec Megatron GPTModel (or list of chunks) on this rank, in
    `named_parameters` order (the same on every rank of a TP/EP group, which the gathers
    rely on), with quantized modules' masters replaced by their cached quantized weights."""
    from ...layers.hooks import low_bit_modules, model_chunks

    cached = {}
    for mod_name, module in low_bit_modules(model):
        caches = module.quant_caches()
        if hasattr(module, "local_experts"):
            for linear, cache in caches.items():
                stack = cache.get()
                for i in range(len(module.local_experts)):
                    cached[f"{mod_name}.local_experts.{i}.{linear}.weight"] = stack[i]
        else:
            for pname, cache in caches.items():
                cached[f"{mod_name}.{pname}"] = cache.get()
    for chunk in model_chunks(model):
        experts_per_rank = _local_expert_count(chunk)
        for name, param in chunk.named_parameters():
            name = _strip_wrappers(name)
            _check_expert_layout(name, experts_per_rank)
            yield ShardedParam(name, cached.get(name, param.detach()),
                               _partition(name, param, experts_per_rank))


def _check_expert_layout(name: str, experts_per_rank: Optional[int]) -> None:
    """Experts are numbered across expert-parallel ranks from the chunk's config, in the
    local spec's layout: any other would publish expert-parallel rank 0's experts only, as
    dense weights."""
    if _GROUPED_EXPERT.search("." + name):
        raise ValueError(f"{name}: experts in the grouped layout (a weight{{e}} an expert) are "
                         f"not published; build them as the local spec's SequentialMLP experts, "
                         f"as the trainer does")
    if experts_per_rank is None and _LOCAL_EXPERT.search("." + name):
        raise ValueError(f"{name}: an expert weight in a model chunk without Megatron's config "
                         f"(num_moe_experts, expert_model_parallel_size), which numbers experts "
                         f"across expert-parallel ranks; pass the Megatron model or its DDP "
                         f"wrapper")


def _local_expert_count(chunk) -> Optional[int]:
    config = getattr(chunk, "config", None)
    if config is None or not getattr(config, "num_moe_experts", None):
        return None
    return config.num_moe_experts // config.expert_model_parallel_size
