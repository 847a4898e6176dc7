"""The weight quantizers' input: a stacked [..., out, in] master, or one [out, in] master per
expert read where it lies.

The Megatron layers keep one Parameter per expert (SequentialMLP's layout and checkpoints), so
quantizing their stack took a torch.stack first: a read and a write of every expert's master
once a step, and a transient copy the size of the layer's experts (on one Qwen3-30B-A3B
layer, W4A16, the H100: 0.79 of the re-quantization's 1.83 ms, docs/benchmarks_30b_reduced.md).
The kernels instead take one pointer (the first master: their dtype and alignment) and a
table of each expert's element offset from it; a stacked master is the table e * out * in.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Sequence, Tuple, Union

import torch
import triton
import triton.language as tl

from megatron_qarl.quant.errors import check_master_weight

Masters = Union[torch.Tensor, Sequence[torch.Tensor]]

#: the widest load the kernels vectorize: 16 bytes
_VECTOR_BYTES = 16


class MasterTable(NamedTuple):
    base: torch.Tensor  # the kernels' pointer: the first expert's master
    offsets: torch.Tensor  # int64 [E] on the device: each expert's element offset from base
    shape: Tuple[int, ...]  # the stacked master's: [..., out, in], or [E, out, in] for a list
    align: int  # every offset is a multiple of it (the kernels' hint): 16 bytes, else 1

    @property
    def experts(self) -> int:
        return self.offsets.numel()


@functools.lru_cache(maxsize=1024)
def _offsets_on(device: torch.device, offsets: Tuple[int, ...]) -> torch.Tensor:
    """One host-to-device copy per table: the masters of a layer stay where they are."""
    return torch.tensor(offsets, dtype=torch.int64, device=device)


def _align(base: torch.Tensor, offsets: Tuple[int, ...]) -> int:
    vector = _VECTOR_BYTES // base.element_size()
    aligned = base.data_ptr() % _VECTOR_BYTES == 0 and all(o % vector == 0 for o in offsets)
    return vector if aligned else 1


def _table(base: torch.Tensor, offsets: Tuple[int, ...], shape: Tuple[int, ...]) -> MasterTable:
    return MasterTable(base, _offsets_on(base.device, offsets), shape, _align(base, offsets))


def master_table(weight: Masters, name: str = "weight") -> MasterTable:
    """The table of a stacked master [..., out, in] (made contiguous first), or of a sequence
    of 2-D masters of one shape, dtype and device, read in place. A sequence with a master
    that is not contiguous or not on 16 bytes is stacked (a copy, as before): read in place,
    its loads could not be vectorized."""
    if isinstance(weight, torch.Tensor):
        check_master_weight(name, weight, check_finite=False)
        w = weight.detach().contiguous()
        n, k = w.shape[-2:]
        return _table(w, tuple(e * n * k for e in range(math.prod(w.shape[:-2]))), w.shape)
    masters = list(weight)
    if not masters:
        raise ValueError(f"{name}: no expert masters given; pass one [out, in] master an "
                         f"expert, or the stacked [experts, out, in] weight")
    first = masters[0]
    check_master_weight(f"{name}[0]", first, check_finite=False)
    # once a weight a step, 128 experts a layer: one cheap pass (detach and the full check of
    # every master took 0.2 ms of host time, the kernel of a W2 0.1-0.3 ms on the H200)
    shape, dtype, device = first.shape, first.dtype, first.device
    base, size = first.data_ptr(), first.element_size()
    offsets, contiguous = [], True
    for i, m in enumerate(masters):
        if m.shape != shape or m.dtype != dtype or m.device != device or m.dim() != 2:
            raise ValueError(
                f"{name}[{i}]: {m.dtype} {tuple(m.shape)} on {m.device}, where expert 0's "
                f"master is {dtype} {tuple(shape)} on {device}; the experts of one weight are "
                f"2-D masters of one shape, dtype and device")
        contiguous = contiguous and m.is_contiguous()
        offsets.append((m.data_ptr() - base) // size)
    offsets = tuple(offsets)
    if not contiguous or _align(first, offsets) == 1:
        return master_table(torch.stack(masters), name)
    return _table(first, offsets, (len(masters), *shape))


@triton.jit
def expert_offset(offsets_ptr, e, ALIGN: tl.constexpr):
    """Expert e's element offset from the base pointer, hinted a multiple of ALIGN (the table's
    align) so that the loads from it stay vectorized."""
    return tl.multiple_of(tl.load(offsets_ptr + e), ALIGN)
