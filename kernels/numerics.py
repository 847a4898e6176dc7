"""Rounding and MMA helpers that give the same bits on the GPU and in the Triton interpreter.

The GPU rounds fp32 -> bf16/e4m3 to nearest even in hardware. Triton's interpreter (CI runs
every kernel under TRITON_INTERPRET=1) truncates instead and multiplies bf16 tiles as raw
uint16, so under the interpreter (SOFTWARE=True) rounding is done with integer bit arithmetic
and MMAs take fp32 copies of the (exactly representable) bf16 operands. Both give the
reference's numbers; only the GPU path is fast.
"""
import os

import numpy as np
import triton
import triton.language as tl
from triton.language.extra import libdevice

#: pass as the SOFTWARE constexpr of the kernels below
INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") == "1"

# 1.5 * 2**23 + 8: adding it rounds |v| < 2**22 to an integer in the low bits, offset by 8
_NIBBLE_MAGIC = tl.constexpr(12582920.0)
# 1.5 * 2**14: rounds to multiples of 2**-9, e4m3's subnormal quantum
_E4M3_SUBNORMAL_MAGIC = tl.constexpr(24576.0)
_E4M3_MIN_NORMAL = tl.constexpr(0.015625)  # 2**-6
# 2**23 as fp32 bits: OR-ing a nibble n into the mantissa gives the float 2**23 + n
_TWO_23_BITS = tl.constexpr(0x4B000000)
_TWO_23_PLUS_8 = tl.constexpr(8388616.0)
# bf16 128.0 in both halves of a 32-bit word: OR-ing nibbles a, b into bits 0-3 and 16-19 gives
# the bf16 pair (128 + a, 128 + b), the int -> float conversion of two nibbles in one operation
_BF16X2_128 = tl.constexpr(0x43004300)
_NIBBLE_PAIR = tl.constexpr(0x000F000F)


def fp32_constant(v: float) -> float:
    """v rounded to fp32, as torch rounds a Python scalar multiplying an fp32 tensor; the
    quant spec multiplies by such reciprocals (1/7, 1/448) so every device gets the same bits."""
    return float(np.float32(v))


@triton.jit
def is_nonfinite(v):
    """1 (int32) where v is NaN or +-inf: the weight quantizers count them on the way."""
    return ((v != v) | (tl.abs(v) == float("inf"))).to(tl.int32)


@triton.jit
def max_keeping_nan(a, b):
    """A max that lets a NaN through (max.NaN on the GPU: no extra instruction), so that a
    reduced amax says whether its inputs had a NaN or inf."""
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def int4_nibbles(x):
    """round_half_even(x) + 8 as int32, for fp32 x in [-8.5, 7.5): the add of 1.5 * 2**23 + 8
    rounds, and its low four bits are then the nibble (no float-to-int conversion)."""
    return (x + _NIBBLE_MAGIC).to(tl.int32, bitcast=True) & 0xF


@triton.jit
def mul_rn(a, b, SOFTWARE: tl.constexpr):
    """a * b rounded once, never fused into a following add or subtract: the compiler contracts
    `a * b - c` into an FMA, which skips the product's rounding. Subnormals kept: libdevice's
    mul_rn is mul.rn.ftz here, which flushes them to zero where torch does not."""
    if SOFTWARE:  # the interpreter has no inline PTX and never contracts
        return a * b
    return tl.inline_asm_elementwise("mul.rn.f32 $0, $1, $2;", "=r,r,r", [a, b],
                                     dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def fma_rn(a, b, c, SOFTWARE: tl.constexpr):
    """a * b + c for fp32 operands, rounded once. Under the interpreter in float64 (the product
    exact, the sum rounded to 53 bits, then to fp32): Triton's interpreter multiplies and adds
    in fp32 before 3.9, twice rounded."""
    if SOFTWARE:
        return (a.to(tl.float64) * b.to(tl.float64) + c.to(tl.float64)).to(tl.float32)
    return tl.fma(a, b, c)


@triton.jit
def div_by_reciprocal(w, s, r, SIGNED_ZEROS: tl.constexpr, SOFTWARE: tl.constexpr):
    """w / s rounded once, as tl.div_rn gives it, from r = tl.div_rn(1, s): one Markstein
    correction of w * r, three instructions where the IEEE division takes about fifteen and a
    call. Exact wherever the quotient is at least 2**-20 for
    - a normal s whose value is a bf16's, from 2**-96 to 2**126, and any fp32 w: a quotient
      by an 8-bit significand lies at least 2**-9 ulp from a rounding midpoint, the corrected
      product within 2**-23 ulp of the quotient;
    - a bf16 w and s = fp32(a * fp32(1/448)) for a bf16 a >= 1e-10, or the 1e-10 floor's
      scale (the FP8 scales of bf16 values): all such pairs tried.
    Round 48 of docs/kernel_rounds.md; tests/kernels/test_div_by_reciprocal.py tries every
    pair of significands. SIGNED_ZEROS: a zero w's quotient is w itself (a select), since the
    correction makes -0 / s +0 (the H200's build folds the negations whichever way they are
    written); without it a zero quotient's sign is unspecified."""
    q = mul_rn(w, r, SOFTWARE)
    q = fma_rn(fma_rn(-q, s, w, SOFTWARE), r, q, SOFTWARE)
    if SIGNED_ZEROS:
        q = tl.where(w == 0, w, q)
    return q


@triton.jit
def _round_bits_rne(v, DROP: tl.constexpr):
    """Bits of fp32 v rounded to nearest even, dropping DROP mantissa bits (finite v)."""
    bits = v.to(tl.int32, bitcast=True)
    bits = bits + ((1 << (DROP - 1)) - 1) + ((bits >> DROP) & 1)
    return bits & (-(1 << DROP))


@triton.jit
def to_bf16(v, SOFTWARE: tl.constexpr):
    """fp32 -> bf16, round to nearest even."""
    if SOFTWARE:  # the top half of the rounded bits; subnormals included
        top = (_round_bits_rne(v, 16) >> 16).to(tl.int16)
        return top.to(tl.bfloat16, bitcast=True)
    return v.to(tl.bfloat16)


@triton.jit
def round_to_bf16(v, SOFTWARE: tl.constexpr):
    """fp32 -> the nearest-even bf16 value, kept in fp32."""
    if SOFTWARE:
        return _round_bits_rne(v, 16).to(tl.float32, bitcast=True)
    return v.to(tl.bfloat16).to(tl.float32)


@triton.jit
def scaled(acc, row_scale, ROUND_FIRST: tl.constexpr, SOFTWARE: tl.constexpr):
    """fp32 acc times the rows' router probs row_scale (broadcast against it), for the
    caller's one bf16 rounding to finish quant.base.scale_rows: the fp32 product (Triton's
    MoE), or ROUND_FIRST the exact product of acc and the prob each rounded to bf16 (Marlin's,
    whose rounding is then a bf16 multiply's)."""
    if ROUND_FIRST:
        return round_to_bf16(acc, SOFTWARE) * round_to_bf16(row_scale, SOFTWARE)
    return acc * row_scale


@triton.jit
def exp_neg(v, SOFTWARE: tl.constexpr):
    """expf(-v), as torch's silu kernels call it (tl.exp is an approximate exp2); under the
    interpreter, which has no libdevice, numpy's exp."""
    if SOFTWARE:
        return tl.exp(0.0 - v)
    return libdevice.exp(0.0 - v)


@triton.jit
def swiglu(gate, up, SOFTWARE: tl.constexpr):
    """silu(gate) * up, fp32 in and out (the caller rounds it to bf16 once), with the roundings
    of quant.ops.reference_gated_activation: gate and up rounded to bf16 (fc1's output), silu
    in fp32 as torch computes it (x / (1 + expf(-x)), IEEE division), times up in fp32."""
    gate = round_to_bf16(gate, SOFTWARE)
    return tl.div_rn(gate, 1.0 + exp_neg(gate, SOFTWARE)) * round_to_bf16(up, SOFTWARE)


@triton.jit
def swiglu_tile(h_ptr, offs_r, offs_f, rows, F, stride_hm, SOFTWARE: tl.constexpr):
    """(swiglu of h = [gate | up] [rows, 2F] bf16 at rows offs_r, columns offs_f of F, fp32;
    the tile's mask). offs_r and offs_f broadcast against each other into the tile: [R, 1] and
    [1, C], or [R, 1, 1] and [1, B, C] for B blocks of C columns."""
    mask = (offs_r < rows) & (offs_f < F)
    gate_ptrs = h_ptr + offs_r.to(tl.int64) * stride_hm + offs_f
    gate = tl.load(gate_ptrs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_ptrs + F, mask=mask, other=0.0).to(tl.float32)
    return swiglu(gate, up, SOFTWARE), mask


@triton.jit
def to_e4m3(v, SOFTWARE: tl.constexpr):
    """fp32 in [-448, 448] -> float8_e4m3fn, round to nearest even (subnormals included).

    The sign is copied bitwise: Triton compiles `-x` as `0 - x`, which turns the -0.0 of a tiny
    negative input into +0.0 on the GPU (code 0x00 where torch writes 0x80).
    """
    if SOFTWARE:
        mag = tl.abs(v)
        normal = _round_bits_rne(mag, 20).to(tl.float32, bitcast=True)
        subnormal = (mag + _E4M3_SUBNORMAL_MAGIC) - _E4M3_SUBNORMAL_MAGIC
        mag = tl.where(mag >= _E4M3_MIN_NORMAL, normal, subnormal)
        sign = (v.to(tl.int32, bitcast=True) >> 31) << 31
        v = (mag.to(tl.int32, bitcast=True) | sign).to(tl.float32, bitcast=True)
    return v.to(tl.float8e4nv)


@triton.jit
def int4_value(nibble):
    """Stored nibble (int32 in [0, 15]) -> fp32 nibble - 8, exactly: an OR into the mantissa
    of 2**23 and one full-rate subtraction instead of the quarter-rate int -> float convert
    (on the H100 decode shapes it measured no faster; kept as the timed code)."""
    return (nibble | _TWO_23_BITS).to(tl.float32, bitcast=True) - _TWO_23_PLUS_8


@triton.jit
def mma(a, b, acc, SOFTWARE: tl.constexpr):
    """acc + a @ b with fp32 accumulation."""
    if SOFTWARE:
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc)
    return tl.dot(a, b, acc)


@triton.jit
def int4_pair_operand(packed, h, scale, SOFTWARE: tl.constexpr):
    """Words of 8 nibbles [R, W] int32 and bf16 scales [R, 2W] -> bf16 GEMM operand [R, 2W]
    whose column 2w + t is bf16((nibble h + 4t of word w - 8) * scale), the engine's operand.

    Per 32-bit lane: a shift and an AND-OR give the bf16 pair (128 + a, 128 + b); splitting the
    word into its halves is register renaming. On the GPU the subtraction of 136 is exact in
    bf16 and the bf16 product rounds the exact product once, as the reference's fp32 product
    then bf16 round: the same bits. The interpreter, whose bf16 arithmetic is not IEEE, takes
    the same values through fp32.
    """
    pair = ((packed >> (4 * h)) & _NIBBLE_PAIR) | _BF16X2_128
    halves = tl.join(pair.to(tl.int16), (pair >> 16).to(tl.int16))
    bits = tl.reshape(halves, [packed.shape[0], 2 * packed.shape[1]])
    if SOFTWARE:
        value = (bits.to(tl.int32) << 16).to(tl.float32, bitcast=True) - 136.0
        return to_bf16(value * scale.to(tl.float32), SOFTWARE)
    return (bits.to(tl.bfloat16, bitcast=True) - 136.0) * scale


@triton.jit
def bf16_pairs(words, SOFTWARE: tl.constexpr):
    """int32 words [R, P] each holding two bf16 (low half first, as in memory) -> [R, 2P]:
    bf16 on the GPU, the same values in fp32 under the interpreter. Loading scales as words
    makes each thread's load 4 bytes wide, the least Triton's software pipeline copies
    asynchronously: a 2-byte load stays a synchronous global read in every K step."""
    if SOFTWARE:
        low = (words << 16).to(tl.float32, bitcast=True)
        high = (words & -65536).to(tl.float32, bitcast=True)
        return tl.reshape(tl.join(low, high), [words.shape[0], 2 * words.shape[1]])
    halves = tl.join(words.to(tl.int16), (words >> 16).to(tl.int16))
    return tl.reshape(halves, [words.shape[0], 2 * words.shape[1]]).to(tl.bfloat16,
                                                                        bitcast=True)

