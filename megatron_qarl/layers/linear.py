"""Quantized Column/RowParallelLinear: Megatron's layers with the matmul replaced by the aligned
(STE) low-bit GEMM on this rank's cached quantized shard.

Only `_forward_impl` is overridden, so parameters, initialisation, TP attributes,
`sharded_state_dict` and the surrounding communication (row-parallel reduce, gather_output)
stay Megatron's. The communication Megatron folds into its fused linear autograd function is
done here with Megatron's own collectives: the sequence-parallel all-gather of the input
(again in backward, which keeps only this rank's slice; the reduce-scatter of its gradient)
and the input-gradient all-reduce.
"""
from __future__ import annotations

from megatron.core.tensor_parallel import (
    ColumnParallelLinear,
    RowParallelLinear,
    copy_to_tensor_model_parallel_region,
)
from megatron.core.tensor_parallel.mappings import (
    _gather_along_first_dim,
    _reduce_scatter_along_first_dim,
)
from megatron.core.utils import get_tensor_model_parallel_group_if_none

from ..quant import QuantScheme, aligned_linear
from .layout import (
    ETP_FLAG, KV_CHANNELS, TP_FLAG, check_layout, column_layout, require_quantizing_scheme,
    row_layout,
)
from .weight_cache import QuantizedWeightCache


def _names(layer, buffer_name) -> tuple:
    """A name for messages ('qkv', 'proj', 'fc1', 'fc2': Megatron's buffer names) and the
    flag that sets this layer's split."""
    return buffer_name or type(layer).__name__, ETP_FLAG if layer.is_expert else TP_FLAG


class _SequenceShards:
    """The sequence-parallel collectives AlignedLinear runs (those of Megatron's
    gather_from_sequence_parallel_region and its backward)."""

    def __init__(self, group):
        self.group = get_tensor_model_parallel_group_if_none(group)

    def gather(self, x):
        return _gather_along_first_dim(x, self.group)

    def reduce_scatter(self, grad):
        return _reduce_scatter_along_first_dim(grad, self.group)


class _AlignedForward:
    """The shared forward of both quantized linears (mixed in before the Megatron class)."""

    def _init_quantization(self, scheme: QuantScheme, name: str) -> None:
        self.quant_cache = QuantizedWeightCache(scheme, [self.weight], name, stacked=False)

    def quant_caches(self) -> dict:
        return {"weight": self.quant_cache}

    def _forward_impl(self, input, weight, bias=None, allreduce_dgrad=False,
                      sequence_parallel=False, tp_group=None, **_fusion_args):
        if weight is not self.weight:
            raise RuntimeError(
                f"{type(self).__name__} quantizes its own weight; a weight passed to forward "
                f"(shared embeddings) cannot be quantized here: leave the output layer "
                f"unquantized"
            )
        shards = _SequenceShards(tp_group) if sequence_parallel else None
        if allreduce_dgrad and not sequence_parallel:
            input = copy_to_tensor_model_parallel_region(input, group=tp_group)
        output = aligned_linear(input, weight, self.quant_cache.get(), shards)
        return output if bias is None else output + bias


class QuantColumnParallelLinear(_AlignedForward, ColumnParallelLinear):
    """ColumnParallelLinear (linear_qkv, dense linear_fc1) running the aligned forward."""

    def __init__(self, input_size, output_size, *, scheme: QuantScheme, config, init_method,
                 stride: int = 1, tp_comm_buffer_name=None, **kwargs):
        super().__init__(input_size, output_size, config=config, init_method=init_method,
                         stride=stride, tp_comm_buffer_name=tp_comm_buffer_name, **kwargs)
        name, flag = _names(self, tp_comm_buffer_name)
        require_quantizing_scheme(scheme, name)
        split = output_size // self.output_size_per_partition
        if name == "qkv":  # q/k/v rows interleave per query group in units of one head
            segment = config.kv_channels or config.hidden_size // config.num_attention_heads
            segment_setting = KV_CHANNELS
        else:
            segment, segment_setting = self.output_size_per_partition // stride, ""
        check_layout(scheme, column_layout(name, output_size, input_size, flag, split, segment,
                                           segment_setting))
        self._init_quantization(scheme, name)


class QuantRowParallelLinear(_AlignedForward, RowParallelLinear):
    """RowParallelLinear (linear_proj, dense linear_fc2) running the aligned forward."""

    def __init__(self, input_size, output_size, *, scheme: QuantScheme, config, init_method,
                 tp_comm_buffer_name=None, **kwargs):
        super().__init__(input_size, output_size, config=config, init_method=init_method,
                         tp_comm_buffer_name=tp_comm_buffer_name, **kwargs)
        name, flag = _names(self, tp_comm_buffer_name)
        require_quantizing_scheme(scheme, name)
        split = input_size // self.input_size_per_partition
        check_layout(scheme, row_layout(name, output_size, input_size, flag, split))
        self._init_quantization(scheme, name)
