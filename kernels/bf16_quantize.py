"""Scheme 'none' (bf16 grouped experts, --moe-grouped-gemm): the per-step "quantization" is
the masters in bf16 with their NaN/inf counted, in one pass (from one master an expert, the
stack the grouped GEMMs read, made in that pass).

NoQuant.quantize_weight counts them with torch: isfinite is an abs, two compares and a
product, then come a not and a sum, six passes over the weight. On 2 Qwen3-30B-A3B layers those
took 1.4 ms per expert stack, 5.6 ms of a 0.06 s grouped bf16 training step (H200, session 50,
docs/results/swiglu_h200_2026-11-29 call 6).
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.base import QuantizedWeight

from .checks import nonfinite_counter, raise_if_nonfinite
from .expert_masters import Masters, expert_offset, master_table
from .numerics import INTERPRETED, is_nonfinite, to_bf16

#: elements a program, 16 a thread at 8 warps (not swept: round 46 timed the step with it)
BLOCK = 4096


@triton.jit
def _bf16_weight_kernel(w_ptr, offsets_ptr, out_ptr, nonfinite_ptr, numel, BLOCK: tl.constexpr,
                        COPY: tl.constexpr, ALIGN: tl.constexpr, SOFTWARE: tl.constexpr):
    """numel elements of expert e's master (expert_masters' table) to the stacked out."""
    e = tl.program_id(1)
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    w = tl.load(w_ptr + expert_offset(offsets_ptr, e, ALIGN) + offs, mask=mask,
                other=0.0).to(tl.float32)
    bad = tl.sum(is_nonfinite(w), 0)
    tl.atomic_add(nonfinite_ptr, bad, mask=bad > 0, sem="relaxed")
    if COPY:
        tl.store(out_ptr + e.to(tl.int64) * numel + offs, to_bf16(w, SOFTWARE), mask=mask)


def bf16_quantize(weight: Masters, scheme, name: str = "weight", check_finite: bool = True,
                  nonfinite: torch.Tensor = None) -> QuantizedWeight:
    """NoQuant.quantize_weight: the weight in bf16 (itself when it is one bf16 tensor, as `.to`
    gives; from one master an expert, read in place (expert_masters), a new stack), checked
    for NaN/inf in the same pass. check_finite: raise (one host sync) if it has any.
    nonfinite: an int32 [1] the pass adds the count to instead of raising (the caller checks
    it; quant.ops.quantize_weight)."""
    masters = master_table(weight, name)
    shape, base = masters.shape, masters.base
    counter = nonfinite_counter(base, nonfinite)
    itself = isinstance(weight, torch.Tensor) and base.dtype == torch.bfloat16
    out = base if itself else torch.empty(shape, device=base.device, dtype=torch.bfloat16)
    numel = shape[-2] * shape[-1]  # an expert's
    if out.numel():
        _bf16_weight_kernel[(triton.cdiv(numel, BLOCK), masters.experts)](
            base, masters.offsets, out, counter, numel, BLOCK=BLOCK, COPY=not itself,
            ALIGN=masters.align, SOFTWARE=INTERPRETED, num_warps=8)
    if check_finite and nonfinite is None:
        raise_if_nonfinite(name, weight, counter)
    return QuantizedWeight(out, None, tuple(shape), scheme)
