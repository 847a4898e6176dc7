"""The model's cached quantized weights with their Megatron names and partition metadata,
for the weight publisher and the serving exporter (which reshard and rename them)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

from megatron.core import parallel_state

from ..quant import QuantizedWeight
from .hooks import Model, low_bit_modules


@dataclass(frozen=True)
class QuantizedTensor:
    """One rank's shard of one quantized Megatron weight (2-D; experts one by one)."""

    #: Megatron parameter name, e.g. decoder.layers.0.mlp.experts.local_experts.3.linear_fc1.weight
    name: str
    qweight: QuantizedWeight
    partition_dim: Optional[int]  # 0: rows split (column-parallel), 1: input columns, None
    partition_stride: int  # 2 for [gate; up] fc1: each rank holds [gate_r; up_r]
    tp_rank: int  # rank in the group that splits it: TP for dense layers, expert-TP for experts
    tp_size: int
    ep_rank: int  # dense weights are replicated over the EP ranks: publish from one
    ep_size: int
    expert: Optional[int]  # global expert index (ep_rank * local experts + local index)
    generation: int  # the cache's re-quantization counter: changes after each optimizer step


def _partition(param, split: int) -> tuple:
    if split == 1 or not getattr(param, "tensor_model_parallel", False):
        return None, 1
    return param.partition_dim, getattr(param, "partition_stride", 1)


def iter_quantized_weights(model: Model) -> Iterator[QuantizedTensor]:
    """Read through the caches (re-quantizing only what an optimizer step invalidated)."""
    ep_rank = parallel_state.get_expert_model_parallel_rank()
    ep_size = parallel_state.get_expert_model_parallel_world_size()
    for module_name, module in low_bit_modules(model):
        for attr, cache in module.quant_caches().items():
            qweight = cache.get()
            if cache.stacked:  # local experts of a QuantizedGroupedExperts
                group = module.tp_group
                for local, param in enumerate(cache.masters):
                    dim, stride = _partition(param, group.size())
                    yield QuantizedTensor(
                        f"{module_name}.local_experts.{local}.{attr}.weight", qweight[local],
                        dim, stride, group.rank(), group.size(), ep_rank, ep_size,
                        ep_rank * len(cache.masters) + local, cache.generation)
            else:
                param, group = cache.masters[0], module.tp_group
                dim, stride = _partition(param, group.size())
                yield QuantizedTensor(f"{module_name}.{attr}", qweight, dim, stride,
                                      group.rank(), group.size(), ep_rank, ep_size, None,
                                      cache.generation)
