"""W4A16 GEMV: dense calls of one to four tokens on CUDA cores, y = x @ dequant(W)^T.

Why not the MMA kernels: at a few tokens an MMA tile is padding but a column or two, and what
bounds the call is the instructions spent turning codes into operands (round 53 of
docs/kernel_rounds.md: 712 SASS instructions a thread a K step, of which 64 were the products,
with x's operand planes going through shared memory). Here every tensor is [words, rows]: a
thread holds 4 neighbouring words (32 inputs) of a weight row and the x of those inputs, so
Triton gives the codes, the scales and x one layout and no value crosses threads before the
final sum. Per pair of weight values: one LOP3 makes the bf16 pair (128 + a, 128 + b) from the
shifted word, one bf16x2 subtraction of 136 (exact) and one bf16x2 multiply by the group scale
give bf16((nibble - 8) * scale) as the reference rounds it, and two FFMA per token add the exact
products in fp32. Only the summation order differs from the reference.
"""
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

from .numerics import INTERPRETED, round_to_bf16, to_bf16
from .split_k import split_buffers, split_sum

#: tokens a call may hold (one accumulator each)
MAX_TOKENS = 4


@triton.jit
def _low_bf16(words):
    """The bf16 in bits 0-15 of each int32, as fp32 (exact)."""
    return (words << 16).to(tl.float32, bitcast=True)


@triton.jit
def _high_bf16(words):
    return (words & -65536).to(tl.float32, bitcast=True)


@triton.jit
def _weight_pair(shifted, scale2, SOFTWARE: tl.constexpr):
    """Nibbles 0 and 4 of each (shifted) word -> bf16((nibble - 8) * scale) as fp32 (low, high).
    scale2: the group scale's bf16 bits in both halves of an int32."""
    if SOFTWARE:  # the interpreter's bf16 arithmetic is not IEEE: the same values in fp32
        pair = (shifted & 0x000F000F) | 0x43004300
        scale = _low_bf16(scale2)
        return (round_to_bf16((_low_bf16(pair) - 136.0) * scale, True),
                round_to_bf16((_high_bf16(pair) - 136.0) * scale, True))
    weights = tl.inline_asm_elementwise(
        "{ .reg .b32 c, m, t; mov.b32 c, 0x43004300; mov.b32 m, 0x43084308; "
        "lop3.b32 t, $1, 0x000F000F, c, 0xEA; sub.rn.bf16x2 t, t, m; mul.rn.bf16x2 $0, t, $2; }",
        "=r,r,r", [shifted, scale2], dtype=tl.int32, is_pure=True, pack=1)
    return _low_bf16(weights), _high_bf16(weights)


@triton.jit
def _x_pair(xw, word_mask, EVEN_K: tl.constexpr):
    if EVEN_K:
        return tl.load(xw)
    return tl.load(xw, mask=word_mask, other=0)


@triton.jit
def _token_products(acc, xw, word_mask, lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3,
                    EVEN_K: tl.constexpr):
    """acc + the products of one token's x (int32 pairs at xw: 4 a word) with the weights of
    inputs 8w + h (lo_h) and 8w + h + 4 (hi_h)."""
    x01 = _x_pair(xw, word_mask, EVEN_K)
    x23 = _x_pair(xw + 1, word_mask, EVEN_K)
    x45 = _x_pair(xw + 2, word_mask, EVEN_K)
    x67 = _x_pair(xw + 3, word_mask, EVEN_K)
    acc += lo0 * _low_bf16(x01)
    acc += hi0 * _low_bf16(x45)
    acc += lo1 * _high_bf16(x01)
    acc += hi1 * _high_bf16(x45)
    acc += lo2 * _low_bf16(x23)
    acc += hi2 * _low_bf16(x67)
    acc += lo3 * _high_bf16(x23)
    acc += hi3 * _high_bf16(x67)
    return acc


@triton.jit
def _row_sums(acc, BLOCK_N: tl.constexpr, BLOCK_W: tl.constexpr):
    return tl.sum(tl.reshape(acc, [BLOCK_N, BLOCK_W]), 1)


@triton.jit
def _w4a16_gemv_kernel(
    x_ptr, w_ptr, s_ptr, y_ptr, partials_ptr, counters_ptr, N, K, stride_xm, stride_wn,
    stride_sn, stride_ym, TOKENS: tl.constexpr, GROUP: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_W: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr, PDL: tl.constexpr,
    SOFTWARE: tl.constexpr,
):
    """x_ptr: x [TOKENS, K] as int32 pairs (stride_xm in pairs); w_ptr: int32 words of 8
    nibbles, input 8w + j in nibble j; s_ptr: the bf16 scales as int16. Program (i, s): weight
    rows i * BLOCK_N.., K slice s. PDL: x and y only after the previous kernel completes."""
    # one axis of (row, word) pairs: a single order, so the codes, scales and x loads share
    # one layout in every Triton version (a 2-D [words, rows] tile's broadcast x and scale
    # pointers tie in contiguity, which Triton 3.6 and 3.9 order differently)
    cells = tl.arange(0, BLOCK_N * BLOCK_W)
    rows = tl.program_id(0) * BLOCK_N + cells // BLOCK_W
    n_mask = rows < N
    words = cells % BLOCK_W
    WORDS_PER_GROUP: tl.constexpr = GROUP // 8
    steps = tl.cdiv(K // 8, BLOCK_W)
    per_split = tl.cdiv(steps, SPLIT_K)
    s_lo = tl.program_id(1) * per_split
    s_hi = tl.minimum(steps, s_lo + per_split)

    acc0 = tl.zeros([BLOCK_N * BLOCK_W], dtype=tl.float32)
    acc1 = tl.zeros([BLOCK_N * BLOCK_W], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK_N * BLOCK_W], dtype=tl.float32)
    acc3 = tl.zeros([BLOCK_N * BLOCK_W], dtype=tl.float32)
    w_rows = w_ptr + rows.to(tl.int64) * stride_wn
    s_rows = s_ptr + rows.to(tl.int64) * stride_sn
    for step in range(s_lo, s_hi):
        word = step * BLOCK_W + words
        word_mask = word < K // 8  # a partial last step's (unused where EVEN_K)
        mask = n_mask
        if not EVEN_K:
            mask = mask & word_mask
        packed = tl.load(w_rows + word, mask=mask, other=0)
        scale = tl.load(s_rows + word // WORDS_PER_GROUP, mask=mask, other=0).to(tl.int32)
        scale2 = (scale & 0xFFFF) | (scale << 16)
        if PDL:  # launched with programmatic dependent launch: the weights are no earlier
            # kernel's output, so they are asked for before waiting for the previous kernel
            gdc_launch_dependents()
            gdc_wait()
        lo0, hi0 = _weight_pair(packed, scale2, SOFTWARE)
        lo1, hi1 = _weight_pair(packed >> 4, scale2, SOFTWARE)
        lo2, hi2 = _weight_pair(packed >> 8, scale2, SOFTWARE)
        lo3, hi3 = _weight_pair(packed >> 12, scale2, SOFTWARE)
        xw = x_ptr + word * 4
        acc0 = _token_products(acc0, xw, word_mask, lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3,
                               EVEN_K)
        if TOKENS > 1:
            acc1 = _token_products(acc1, xw + stride_xm, word_mask, lo0, hi0, lo1, hi1, lo2,
                                   hi2, lo3, hi3, EVEN_K)
        if TOKENS > 2:
            acc2 = _token_products(acc2, xw + 2 * stride_xm, word_mask, lo0, hi0, lo1, hi1,
                                   lo2, hi2, lo3, hi3, EVEN_K)
        if TOKENS > 3:
            acc3 = _token_products(acc3, xw + 3 * stride_xm, word_mask, lo0, hi0, lo1, hi1,
                                   lo2, hi2, lo3, hi3, EVEN_K)

    # [rows, tokens]: one column a token, padded to a power of two
    y0 = _row_sums(acc0, BLOCK_N, BLOCK_W)
    if TOKENS == 1:
        y = y0[:, None]
    elif TOKENS == 2:
        y = tl.join(y0, _row_sums(acc1, BLOCK_N, BLOCK_W))
    else:  # join stacks on a new last axis: [n, i, j] holds token 2i + j
        y = tl.reshape(tl.join(tl.join(y0, _row_sums(acc2, BLOCK_N, BLOCK_W)),
                               tl.join(_row_sums(acc1, BLOCK_N, BLOCK_W),
                                       _row_sums(acc3, BLOCK_N, BLOCK_W))), [BLOCK_N, 4])
    tokens = tl.arange(0, y.shape[1])
    out_rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    y_ptrs = y_ptr + tokens[None, :] * stride_ym + out_rows[:, None]
    out_mask = (out_rows < N)[:, None] & (tokens[None, :] < TOKENS)
    if SPLIT_K == 1:
        tl.store(y_ptrs, to_bf16(y, SOFTWARE), mask=out_mask)
    else:
        last, y = split_sum(y, partials_ptr, counters_ptr, tl.program_id(0),
                            tl.program_id(1), SPLIT_K)
        if last:
            tl.store(y_ptrs, to_bf16(y, SOFTWARE), mask=out_mask)


def gemv_applies(x2: torch.Tensor, qweight) -> bool:
    """Whether w4a16_gemv takes this call: up to MAX_TOKENS rows, K in whole words."""
    return 0 < x2.shape[0] <= MAX_TOKENS and qweight.in_features % 8 == 0


def w4a16_gemv(x2: torch.Tensor, qweight, block_n: int = 16, block_w: int = 128,
               split_k: int = 1, num_warps: int = 4) -> torch.Tensor:
    """x2 [T, in] bf16 (T <= MAX_TOKENS, rows contiguous) @ W^T for one W4A16 QuantizedWeight
    [out, in] -> [T, out] bf16. block_w: words (8 inputs each) a thread block takes a K step;
    a warp covers 128 of them, so block_w // 128 (at least one) warps share a row."""
    rows, k = x2.shape
    n = qweight.out_features
    if not gemv_applies(x2, qweight):
        raise ValueError(f"x: {rows} rows, in_features {k}: w4a16_gemv takes 1-{MAX_TOKENS} "
                         f"rows and in_features a multiple of 8; call w4a16_linear")
    x_pairs = x2.contiguous().view(torch.int32)
    pdl = x2.is_cuda and torch.cuda.get_device_capability(x2.device)[0] >= 9
    data, scale = qweight.data, qweight.scale
    y = torch.empty(rows, n, device=x2.device, dtype=x2.dtype)
    col_tiles = triton.cdiv(n, block_n)
    block_t = triton.next_power_of_2(rows)
    split_k, partials, counters = split_buffers(split_k, col_tiles, block_n * block_t,
                                                torch.float32, y)
    _w4a16_gemv_kernel[(col_tiles, split_k)](
        x_pairs, data, scale.view(torch.int16), y, partials, counters, n, k,
        x_pairs.stride(0), data.stride(0), scale.stride(0), y.stride(0),
        TOKENS=rows, GROUP=qweight.scheme.group_size, BLOCK_N=block_n, BLOCK_W=block_w,
        SPLIT_K=split_k, EVEN_K=(k // 8) % block_w == 0, PDL=pdl, SOFTWARE=INTERPRETED,
        num_warps=num_warps, launch_pdl=pdl,
    )
    return y
