"""W4A16 GEMV: dense calls of one token on CUDA cores, y = x @ dequant(W)^T.

Why not the MMA kernels: at one token an MMA tile is padding but a column, and a decode call
of one token is bound by how many code bytes are in flight and how soon the next call starts.
Here every tensor is one axis of (weight row, word) cells: a thread holds 4 neighbouring words
(32 inputs) of a row and the x of those inputs, so Triton gives the codes, the scales and x one
layout and no value crosses threads before the row sums. Per pair of weight values one LOP3
makes the bf16 pair (128 + a, 128 + b) from the shifted word, a bf16x2 subtraction of 136
(exact) and a bf16x2 multiply by the group scale give bf16((nibble - 8) * scale) as the
reference rounds it, and two FFMA add the exact products in fp32: only the summation order
differs from the reference. A program's K step is its rows' whole K up to 4096 inputs, 32
cells a thread (gemv_tiles), and on Hopper the kernel is launched with programmatic dependent
launch, its weights asked for before it waits for the previous kernel (H200, round 54 of
docs/kernel_rounds.md).
"""
import torch
import triton
import triton.language as tl

from .numerics import INTERPRETED, round_to_bf16, to_bf16
from .pdl import pdl_on, wait_for_previous_kernel

#: a thread's (row, word) cells: at 64 the H200 build took 1.7-2.3x as long (round 54)
CELLS_PER_THREAD = 32
#: words (8 inputs) of a K step: K up to 4096 in one step
MAX_BLOCK_W = 512
BLOCK_N = 8


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
def _x_pairs(ptrs, word_mask, EVEN_K: tl.constexpr):
    """Unmasked where K fills the steps: a predicate a cell spilled registers (2-4x the time on
    the H200, round 54)."""
    if EVEN_K:
        return tl.load(ptrs)
    return tl.load(ptrs, mask=word_mask, other=0)


@triton.jit
def _w4a16_gemv_kernel(x_ptr, w_ptr, s_ptr, y_ptr, N, K, stride_wn, stride_sn,
                       GROUP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_W: tl.constexpr,
                       EVEN_K: tl.constexpr, PDL: tl.constexpr, SOFTWARE: tl.constexpr):
    """x_ptr: x [K] as int32 pairs; w_ptr: int32 words of 8 nibbles, input 8w + j in nibble j;
    s_ptr: the bf16 scales as int16. Program i: weight rows i * BLOCK_N... PDL: x and y only
    after the previous kernel completes."""
    # one axis of cells: a single order, so the codes, scales and x share one layout in every
    # Triton version (in a 2-D [words, rows] tile the broadcast x and scale pointers tie in
    # contiguity, which Triton 3.6 and 3.9 order differently)
    cells = tl.arange(0, BLOCK_N * BLOCK_W)
    rows = tl.program_id(0) * BLOCK_N + cells // BLOCK_W
    words = cells % BLOCK_W
    n_mask = rows < N
    WORDS_PER_GROUP: tl.constexpr = GROUP // 8
    w_rows = w_ptr + rows.to(tl.int64) * stride_wn
    s_rows = s_ptr + rows.to(tl.int64) * stride_sn
    acc = tl.zeros([BLOCK_N * BLOCK_W], dtype=tl.float32)
    for step in range(0, tl.cdiv(K // 8, BLOCK_W)):
        word = step * BLOCK_W + words
        word_mask = word < K // 8
        mask = n_mask if EVEN_K else n_mask & word_mask
        packed = tl.load(w_rows + word, mask=mask, other=0)
        scale = tl.load(s_rows + word // WORDS_PER_GROUP, mask=mask, other=0).to(tl.int32)
        scale2 = (scale & 0xFFFF) | (scale << 16)
        wait_for_previous_kernel(PDL)  # after the weights: no earlier kernel writes them
        x_pairs = x_ptr + word * 4  # inputs 8w + 2p, 8w + 2p + 1 in pair p
        x01 = _x_pairs(x_pairs, word_mask, EVEN_K)
        x23 = _x_pairs(x_pairs + 1, word_mask, EVEN_K)
        x45 = _x_pairs(x_pairs + 2, word_mask, EVEN_K)
        x67 = _x_pairs(x_pairs + 3, word_mask, EVEN_K)
        # one product added at a time: an FFMA each (a sum of two products adds an FMUL)
        lo, hi = _weight_pair(packed, scale2, SOFTWARE)  # inputs 8w, 8w + 4
        acc += lo * _low_bf16(x01)
        acc += hi * _low_bf16(x45)
        lo, hi = _weight_pair(packed >> 4, scale2, SOFTWARE)
        acc += lo * _high_bf16(x01)
        acc += hi * _high_bf16(x45)
        lo, hi = _weight_pair(packed >> 8, scale2, SOFTWARE)
        acc += lo * _low_bf16(x23)
        acc += hi * _low_bf16(x67)
        lo, hi = _weight_pair(packed >> 12, scale2, SOFTWARE)
        acc += lo * _high_bf16(x23)
        acc += hi * _high_bf16(x67)
    y = tl.sum(tl.reshape(acc, [BLOCK_N, BLOCK_W]), 1)
    out_rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(y_ptr + out_rows, to_bf16(y, SOFTWARE), mask=out_rows < N)


def gemv_tiles(k: int) -> tuple:
    """(block_n, block_w, num_warps) for K inputs: BLOCK_N rows a program, the whole K in one
    step up to MAX_BLOCK_W words, CELLS_PER_THREAD cells a thread."""
    block_w = min(MAX_BLOCK_W, triton.next_power_of_2(triton.cdiv(k, 8)))
    return BLOCK_N, block_w, max(1, BLOCK_N * block_w // (32 * CELLS_PER_THREAD))


def w4a16_gemv(x: torch.Tensor, qweight, tiles: tuple = None) -> torch.Tensor:
    """x [1, in] bf16 @ W^T for one W4A16 QuantizedWeight [out, in] -> [1, out] bf16; tiles:
    (block_n, block_w, num_warps), gemv_tiles' by default."""
    rows, k = x.shape
    if rows != 1 or k % 8:
        raise ValueError(f"x: {tuple(x.shape)}: w4a16_gemv takes one token and in_features a "
                         f"multiple of 8; call w4a16_linear")
    block_n, block_w, num_warps = tiles or gemv_tiles(k)
    n = qweight.out_features
    pdl = pdl_on(x.device)
    y = torch.empty(1, n, device=x.device, dtype=x.dtype)
    x = x.contiguous()
    if x.data_ptr() % 4:  # a view at an odd element: its int32 words would straddle
        x = x.clone()
    _w4a16_gemv_kernel[(triton.cdiv(n, block_n), )](
        x.view(torch.int32), qweight.data, qweight.scale.view(torch.int16), y, n,
        k, qweight.data.stride(0), qweight.scale.stride(0), GROUP=qweight.scheme.group_size,
        BLOCK_N=block_n, BLOCK_W=block_w, EVEN_K=(k // 8) % block_w == 0, PDL=pdl,
        SOFTWARE=INTERPRETED, num_warps=num_warps, launch_pdl=pdl)
    return y
