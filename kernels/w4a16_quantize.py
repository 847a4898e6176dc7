"""Fused quantize-and-pack of master weights into the W4A16 serving layout, in one pass.

Bit-identical to megatron_qarl.quant.W4A16.quantize_weight: scale = bf16(absmax * fp32(1/7))
per group, codes = clamp(round_half_even(w / scale), -8, 7) against the rounded scale, nibble
q + 8 packed low nibble first into int32 words. Runs every optimizer step, so it reads the master
weight once (fp32 or bf16) and writes 0.5 B/param of codes plus the scales; NaN/inf are
counted on the way instead of by a second pass over the weight. For the Hopper kernels it
also writes the codes in their lane order (w4a16_lanes), which they would otherwise make at
their first call of each step by a reorder of ten torch passes over the codes.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.base import QuantizedWeight
from megatron_qarl.quant.w4a16 import INV_QMAX

from .checks import nonfinite_counter, raise_if_nonfinite
from .expert_masters import MasterTable, Masters, expert_offset, master_table
from .gluon_hopper import is_hopper
from .numerics import (INTERPRETED, div_by_reciprocal, fp32_constant, int4_nibbles,
                       is_nonfinite, max_keeping_nan, round_to_bf16, to_bf16)
from .w4a16_lanes import keep_lane_codes

_INV_7 = tl.constexpr(fp32_constant(INV_QMAX))
# the scales div_by_reciprocal divides by exactly
_MIN_SCALE = tl.constexpr(2.0 ** -96)
_MAX_SCALE = tl.constexpr(2.0 ** 126)


@triton.jit
def _bit_or(a, b):
    return a | b


@triton.jit
def _lane_words(q, BLOCK_R: tl.constexpr):
    """Nibbles [rows, 16 words, 8] of one 128-input block -> its 16 words of each row in lane
    order: the pair (2q, 2q + 1) of serving word 8h + 4i + j at bits 4j and 16 + 4j of word
    4q + 2h + i."""
    pairs = tl.reshape(q, [BLOCK_R, 2, 2, 4, 4, 2])  # [rows, h, i, j, q, pair element]
    j = tl.arange(0, 4)[None, None, None, :, None, None]
    t = tl.arange(0, 2)[None, None, None, None, None, :]
    words = tl.reduce(tl.reduce(pairs << (4 * j + 16 * t), 5, _bit_or), 3, _bit_or)
    return tl.reshape(tl.permute(words, (0, 3, 1, 2)), [BLOCK_R, 16])


@triton.jit
def _w4a16_quantize_kernel(
    w_ptr, offsets_ptr, packed_ptr, lanes_ptr, scale_ptr, nonfinite_ptr, N, K,
    GROUP: tl.constexpr, BLOCK_R: tl.constexpr, LANES: tl.constexpr, ALIGN: tl.constexpr,
    SOFTWARE: tl.constexpr,
):
    """Rows of expert e's master (expert_masters' table) to rows e * N + r of the outputs."""
    pid_r, g, e = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    words = tl.arange(0, GROUP // 8)
    nib = tl.arange(0, 8)
    r_mask = offs_r < N
    cols = g * GROUP + words[None, :, None] * 8 + nib[None, None, :]
    w_rows = w_ptr + expert_offset(offsets_ptr, e, ALIGN) + offs_r.to(tl.int64) * K
    w = tl.load(w_rows[:, None, None] + cols, mask=r_mask[:, None, None],
                other=0.0).to(tl.float32)

    amax = tl.reduce(tl.reduce(tl.abs(w), 2, max_keeping_nan), 1, max_keeping_nan)
    if tl.max(is_nonfinite(amax), 0):  # rare: count the NaN/inf one by one
        nonfinite = tl.sum(tl.sum(tl.sum(is_nonfinite(w), 2), 1), 0)
        tl.atomic_add(nonfinite_ptr, nonfinite, sem="relaxed")

    scale = round_to_bf16(amax * _INV_7, SOFTWARE)
    s = scale[:, None, None]
    safe = tl.where(s > 0, s, 1.0)
    if tl.min(((scale >= _MIN_SCALE) & (scale <= _MAX_SCALE)) | (scale == 0), 0):
        # |w| <= amax <= 7.014 * scale: x lies in the codes' range, no clamp
        x = div_by_reciprocal(w, safe, tl.div_rn(1.0, safe), False, SOFTWARE)
    else:  # a subnormal or non-finite scale: the IEEE division
        x = tl.where(s > 0, tl.div_rn(w, safe), 0.0)
        x = tl.minimum(tl.maximum(x, -8.0), 7.0)
    q = int4_nibbles(x)
    word = tl.reduce(q << (nib[None, None, :] * 4), 2, _bit_or)

    out_r = e.to(tl.int64) * N + offs_r
    words_at = out_r[:, None] * (K // 8) + g * (GROUP // 8) + words[None, :]
    tl.store(packed_ptr + words_at, word, mask=r_mask[:, None])
    if LANES:  # GROUP == 128: this group is one lane-order block
        tl.store(lanes_ptr + words_at, _lane_words(q, BLOCK_R), mask=r_mask[:, None])
    tl.store(scale_ptr + out_r * (K // GROUP) + g, to_bf16(scale, SOFTWARE), mask=r_mask)


def program_shape(masters: MasterTable, lane_order: bool) -> tuple:
    """(rows a program, warps). H200, one layer's experts (docs/kernel_rounds.md, rounds 42,
    43 and 48): fp32 masters are quickest with 8 rows and one warp (0.88-0.92x the time of 32
    rows and 4 warps), bf16 ones with 32 rows and 4 warps, or with the lane order 32 rows and
    one warp (W13 0.82x the time of 8 rows and one warp, W2 stacked 0.89x, in place 1.06x;
    32 rows and 4 warps take 5.4x)."""
    if masters.base.element_size() == 4:
        return 8, 1
    return (32, 1) if lane_order else (32, 4)


def lane_order_applies(masters: MasterTable, group: int) -> bool:
    """Stacked experts on a Hopper GPU with 128-input groups: the grouped kernels read them in
    lane order every step up to 2047 rows an expert. Dense weights are left to make theirs at
    a first decode-size call (at training sizes they go through the bf16 operand)."""
    return (len(masters.shape) == 3 and group == 128 and masters.base.is_cuda
            and is_hopper(masters.base.device))


def w4a16_quantize(weight: Masters, scheme, name: str = "weight",
                   check_finite: bool = True, block_rows: int = None,
                   num_warps: int = None, lane_order: bool = None,
                   nonfinite: torch.Tensor = None) -> QuantizedWeight:
    """Master weight [..., out, in], or one [out, in] master an expert (read in place,
    expert_masters) -> QuantizedWeight (packed int32 [..., out, in/8], bf16 scales [..., out,
    in/group]) for a W4A16 `scheme`; equal to scheme.quantize_weight of the stacked masters.

    check_finite: raise (one host sync) if the weight has NaN/inf; with False their codes
    are unspecified. nonfinite: an int32 [1] the pass adds the NaN/inf count to instead of
    raising (the caller checks it; quant.ops.quantize_weight). block_rows, num_warps:
    program_shape's unless given. lane_order: also write the codes in lane order as the
    QuantizedWeight's memo (w4a16_lanes.lane_codes); lane_order_applies's answer unless given
    (128-input groups only).
    """
    masters = master_table(weight, name)
    shape, device = masters.shape, masters.base.device
    n, k = shape[-2:]
    scheme.validate_shape(name, n, k)
    group = scheme.group_size
    packed = torch.empty(*shape[:-1], k // 8, device=device, dtype=torch.int32)
    scale = torch.empty(*shape[:-1], k // group, device=device, dtype=torch.bfloat16)
    if lane_order is None:
        lane_order = lane_order_applies(masters, group)
    if lane_order and group != 128:
        raise ValueError(f"lane_order=True for {name} with group size {group}: the lane order "
                         f"works on 128-input groups (w4a16-g128)")
    lanes = torch.empty_like(packed) if lane_order else packed
    counter = nonfinite_counter(masters.base, nonfinite)
    if packed.numel():
        program = program_shape(masters, lane_order)
        block_rows, num_warps = block_rows or program[0], num_warps or program[1]
        grid = (triton.cdiv(n, block_rows), k // group, masters.experts)
        _w4a16_quantize_kernel[grid](masters.base, masters.offsets, packed, lanes, scale,
                                     counter, n, k, GROUP=group, BLOCK_R=block_rows,
                                     LANES=lane_order, ALIGN=masters.align,
                                     SOFTWARE=INTERPRETED, num_warps=num_warps)
    if check_finite and nonfinite is None:
        raise_if_nonfinite(name, weight, counter)
    qweight = QuantizedWeight(packed, scale, tuple(shape), scheme)
    if lane_order:
        keep_lane_codes(qweight, lanes)
    return qweight
