"""The quantized copy of master weights, computed once per optimizer step.

Every micro-batch forward and the weight publisher read the cache; `invalidate()` (called by
the optimizer post-step hook, `hooks.install_quant_refresh_hook`) marks it dirty and the next
reader re-quantizes from the updated masters. A model's caches invalidated together are
re-quantized together at the first read, their NaN/inf checks with one host sync: a sync a
weight stalls the host's launches of the forward around it. As a net under the hook, a reader
also compares each master's autograd version counter with the one recorded at quantization and
re-quantizes when an in-place update bumped it (an optimizer stepping the params themselves,
`load_state_dict`), and when the first master's storage moved (`.to(dtype)` swaps `.data`
without a bump). Writes through `.data` or into Megatron's contiguous param buffers do not
bump it: for those the hook is the only guard, which is why the trainer must install it.

With keep_operand (W4A16 experts, --quant-keep-operand) each step's quantized weight also keeps
the dequantized bf16 GEMM operand the kernels make at its first use; `invalidate()` frees it.
"""
from __future__ import annotations

import weakref
from typing import Optional, Sequence

import torch

from ..quant import QuantizedWeight, QuantScheme, ops
from ..quant.errors import check_master_weight


class QuantizedWeightCache:
    """Quantized weight of one linear (one master) or of a module's local experts (stacked
    [E, out, in] from one 2-D master per expert)."""

    def __init__(self, scheme: QuantScheme, masters: Sequence[torch.nn.Parameter], name: str,
                 stacked: bool, keep_operand: bool = False):
        self.scheme = scheme
        self.masters = list(masters)
        self.name = name
        self.stacked = stacked
        self.keep_operand = keep_operand
        self._qweight: Optional[QuantizedWeight] = None
        self._versions: list = []
        self._together: Sequence[weakref.ref] = ()
        #: how many times the weight was quantized (tests and logs: once per optimizer step)
        self.quantize_count = 0
        #: bumped on each re-quantization, so a publisher can tell versions apart
        self.generation = 0

    def _master_versions(self) -> list:
        """Each master's version, then where the first one's data lies (one check for a
        module moved to another dtype or device, which moves every master)."""
        first = self.masters[0]
        return [p._version for p in self.masters] + [first.data_ptr(), first.dtype]

    def is_fresh(self) -> bool:
        return self._qweight is not None and self._versions == self._master_versions()

    def invalidate(self, together: Sequence[weakref.ref] = ()) -> None:
        """together: weak references to the caches invalidated with this one
        (`invalidate_together`), re-quantized with it at the first read of any of them."""
        if self._qweight is not None:  # kernel memos go now, not with the last holder
            self._qweight.operand = self._qweight.lane_codes = None
        self._qweight = None
        self._together = together

    def master(self) -> torch.Tensor:
        """The full-precision weight that is quantized ([E, out, in] when stacked: a copy; the
        quantizer reads `quantizer_input`, the STE `masters`)."""
        return torch.stack(self.masters) if self.stacked else self.masters[0]

    def quantizer_input(self):
        """The master, or the experts' masters as they lie (the kernels read them in place; the
        reference stacks them): no stacked copy of a layer's experts a step. Read under
        no_grad (quantize_together)."""
        return self.masters if self.stacked else self.masters[0]

    def get(self) -> QuantizedWeight:
        if not self.is_fresh():
            group = [c for c in (ref() for ref in self._together) if c is not None]
            quantize_together(group if self in group else [self])
        return self._qweight

    def _keep(self, qweight: QuantizedWeight) -> None:
        qweight.keep_operand = self.keep_operand
        self._qweight, self._together = qweight, ()
        self._versions = self._master_versions()
        self.quantize_count += 1
        self.generation += 1


def invalidate_together(caches: Sequence[QuantizedWeightCache]) -> None:
    """The first read of any of `caches` re-quantizes all of them. Each holds the group by weak
    references: a group holds its own members, and that cycle kept a dropped model's weights
    (and their gradient buffers) alive until the cyclic garbage collector ran (0.6-1.9 GiB of
    a 217M-parameter model's peak in a process that builds several: session 49)."""
    group = tuple(weakref.ref(cache) for cache in caches)
    for cache in caches:
        cache.invalidate(group)


def quantize_together(caches: Sequence[QuantizedWeightCache]) -> None:
    """Re-quantize the stale ones among `caches`, checking them all for NaN/inf with one host
    sync (a device); on NaN/inf, raise QuantizationError naming the first such weight and keep
    none of the new quantized weights."""
    stale = [c for c in caches if not c.is_fresh()]
    counts = {}  # device -> int32 [1]: the NaN/inf its weights hold
    quantized = []
    with torch.no_grad():
        for cache in stale:
            device = cache.masters[0].device
            if device not in counts:
                counts[device] = torch.zeros(1, dtype=torch.int32, device=device)
            quantized.append(ops.quantize_weight(cache.scheme, cache.quantizer_input(),
                                                 cache.name, counts[device]))
    if any(int(n) for n in counts.values()):
        for cache in stale:  # the error path: find the weight by its master again
            check_master_weight(cache.name, cache.master(), check_finite=True)
    for cache, qweight in zip(stale, quantized):
        cache._keep(qweight)
