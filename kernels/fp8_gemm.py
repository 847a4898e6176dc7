"""FP8 block-scaled GEMMs (1x128 activations x 128x128 weights, fp32 accumulation).

Dense: up to split_k.DECODE_MAX_ROWS tokens the Triton kernel below with K split (dense_tiles),
unless its programs would pass split_k.DECODE_WAVES waves; past them
torch.nn.functional.scaled_mm (cuBLAS) on SM90, which wants the activation scales
token-major with the token count padded to 4, and the weight scales' K-block count padded
to 4 (measured on an H100 with torch 2.11: the activation scales must not be padded in K).
Grouped (MoE): from 2048 rows on Hopper the warp-specialized Gluon kernel
(fp8_grouped_ws), else a Triton kernel (torch has no grouped blockwise-FP8 op on Hopper), which
is also the dense fallback where scaled_mm's blockwise mode does not apply.
"""
import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from megatron_qarl.quant.fp8_block import BLOCK, unpack_activation_rows

from .checks import (check_activation, check_expert_tokens, check_probs, check_tokens_per_expert,
                     counts_on, tile_rows, unit_stride_codes)
from .expert_tiles import program_tile, row_tile_count, row_tile_grid
from .fp8_grouped_ws import MIN_ROWS as ws_min_rows, MIN_ROWS_PER_EXPERT as \
    ws_min_rows_per_expert, applies as ws_applies, default_tiles as ws_tiles, fp8_grouped_ws
from .gluon_hopper import is_hopper, sm_count
from .fp8_quantize import fp8_quantize_activation, fp8_quantize_swiglu
from .numerics import INTERPRETED, mma
from .pdl import pdl_on, wait_for_previous_kernel
from .split_k import (DECODE_MAX_ROWS, DECODE_WAVES, NARROW_ROWS, decode_programs, decode_tiles,
                      k_slice, split_buffers, store_split)

_SCALED_MM_PAD = 4


@triton.jit(do_not_specialize=["num_experts", "total_rows"])  # batch sizes share a compile
def _fp8_grouped_kernel(
    xq_ptr, xs_ptr, wq_ptr, ws_ptr, y_ptr, p_ptr, counts_ptr, partials_ptr, counters_ptr,
    num_experts, total_rows, N, K, stride_xm, stride_xsm, stride_xsk, stride_we, stride_wn,
    stride_wse, stride_wsn, stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, E_PAD: tl.constexpr, DENSE: tl.constexpr,
    ROW_LOOP: tl.constexpr, HAS_PROBS: tl.constexpr, PDL: tl.constexpr, SOFTWARE: tl.constexpr,
):
    """ROW_LOOP: as w4a16_gemm's kernel (programs walk the row tiles of a capped grid).
    Axis 2: a slice of K (split_k.split_sum adds the slices). HAS_PROBS: each row's router
    prob p_ptr[row] multiplies its accumulator before the rounding. PDL: pdl.py."""
    wait_for_previous_kernel(PDL)
    if ROW_LOOP:
        tiles = row_tile_count(counts_ptr, num_experts, BLOCK_M, E_PAD)
        for tile in range(tl.program_id(1), tiles, tl.num_programs(1)):
            _fp8_tile(tile, xq_ptr, xs_ptr, wq_ptr, ws_ptr, y_ptr, p_ptr, counts_ptr,
                      partials_ptr, counters_ptr, num_experts, total_rows, N, K, stride_xm,
                      stride_xsm, stride_xsk, stride_we, stride_wn, stride_wse, stride_wsn,
                      stride_ym, BLOCK_M, BLOCK_N, BLOCK_K, SPLIT_K, E_PAD, DENSE, HAS_PROBS,
                      SOFTWARE)
    else:
        _fp8_tile(tl.program_id(1), xq_ptr, xs_ptr, wq_ptr, ws_ptr, y_ptr, p_ptr, counts_ptr,
                  partials_ptr, counters_ptr, num_experts, total_rows, N, K, stride_xm,
                  stride_xsm, stride_xsk, stride_we, stride_wn, stride_wse, stride_wsn,
                  stride_ym, BLOCK_M, BLOCK_N, BLOCK_K, SPLIT_K, E_PAD, DENSE, HAS_PROBS,
                  SOFTWARE)


@triton.jit
def _fp8_tile(
    tile, xq_ptr, xs_ptr, wq_ptr, ws_ptr, y_ptr, p_ptr, counts_ptr, partials_ptr, counters_ptr,
    num_experts, total_rows, N, K, stride_xm, stride_xsm, stride_xsk, stride_we, stride_wn,
    stride_wse, stride_wsn, stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, E_PAD: tl.constexpr, DENSE: tl.constexpr,
    HAS_PROBS: tl.constexpr, SOFTWARE: tl.constexpr,
):
    expert, rows, row_mask, offs_n, n_mask, has_rows = program_tile(
        counts_ptr, num_experts, total_rows, N, tile, BLOCK_M, BLOCK_N, E_PAD, DENSE)
    offs_k = tl.arange(0, BLOCK_K)
    e = expert.to(tl.int64)
    k_lo, k_hi = k_slice(K, has_rows, BLOCK_K, SPLIT_K)
    first = tl.maximum(tl.minimum(k_lo, k_hi - 1), 0)  # an empty slice reads a block in range

    # the per-block scales are read one K block ahead: Triton's pipeline copies only the
    # MMA operands asynchronously, and a scale read in its own iteration waits the full
    # memory latency in every K block
    # A tile no wider than a weight block has one weight scale per K block: the promotion is
    # then one FMA per accumulator element (acc + partial * (sa * sb)) instead of three.
    ONE_WEIGHT_BLOCK: tl.constexpr = BLOCK_N <= BLOCK_K
    sa_rows = xs_ptr + rows * stride_xsm
    if ONE_WEIGHT_BLOCK:
        sb_rows = ws_ptr + e * stride_wse + (tl.program_id(0) * BLOCK_N // BLOCK_K) * stride_wsn
        sb_next = tl.load(sb_rows + first)
    else:
        sb_rows = ws_ptr + e * stride_wse + (offs_n // BLOCK_K) * stride_wsn
        sb_next = tl.load(sb_rows + first, mask=n_mask, other=0.0)
    sa_next = tl.load(sa_rows + first * stride_xsk, mask=row_mask, other=0.0)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kb in range(k_lo, k_hi):
        sa, sb = sa_next, sb_next
        ahead = tl.minimum(kb + 1, k_hi - 1)  # the last block re-reads its own (unused)
        sa_next = tl.load(sa_rows + ahead * stride_xsk, mask=row_mask, other=0.0)
        if ONE_WEIGHT_BLOCK:
            sb_next = tl.load(sb_rows + ahead)
        else:
            sb_next = tl.load(sb_rows + ahead, mask=n_mask, other=0.0)
        ks = kb * BLOCK_K + offs_k
        a = tl.load(xq_ptr + rows[:, None].to(tl.int64) * stride_xm + ks[None, :],
                    mask=row_mask[:, None] & (ks[None, :] < K), other=0.0)
        b = tl.load(wq_ptr + e * stride_we + offs_n[None, :] * stride_wn + ks[:, None],
                    mask=n_mask[None, :] & (ks[:, None] < K), other=0.0)
        partial = mma(a, b, tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32), SOFTWARE)
        if ONE_WEIGHT_BLOCK:
            acc += partial * (sa * sb)[:, None]
        else:
            acc += partial * sa[:, None] * sb[None, :]

    y_ptrs = y_ptr + rows[:, None].to(tl.int64) * stride_ym + offs_n[None, :]
    mask = row_mask[:, None] & n_mask[None, :]
    prob = tl.zeros([BLOCK_M], dtype=tl.float32)
    if HAS_PROBS:
        prob = tl.load(p_ptr + rows, mask=row_mask, other=0.0).to(tl.float32)
    store_split(acc, y_ptrs, mask, partials_ptr, counters_ptr,
                tile * tl.num_programs(0) + tl.program_id(0), SPLIT_K, SOFTWARE, prob[:, None],
                HAS_PROBS, False)


def _launch(xq, xs, qweight, counts, num_experts, dense, block_m, block_n, num_warps,
            num_stages, split_k=1, routed_rows=None, probs=None):
    """routed_rows: the rows the grid is sized for (expert_tiles.row_tile_grid); split_k:
    slices of K for a dense call (split_k.py); probs: see the kernel's HAS_PROBS."""
    wq, ws = qweight.data, qweight.scale
    if wq.dim() == 2:
        wq, ws = wq.unsqueeze(0), ws.unsqueeze(0)
    n, k = qweight.shape[-2], qweight.shape[-1]
    xq = unit_stride_codes(xq, torch.float8_e4m3fn, k)
    rows = xq.shape[0]
    y = torch.empty(rows, n, device=xq.device, dtype=torch.bfloat16)
    if rows == 0:
        return y
    if dense:
        tiles, row_loop = triton.cdiv(rows, block_m), False
    else:
        tiles, row_loop = row_tile_grid(rows, tile_rows(rows, routed_rows), num_experts, block_m)
    col_tiles = triton.cdiv(n, block_n)
    split_k, partials, counters = split_buffers(split_k if dense else 1, col_tiles * tiles,
                                                block_m * block_n, torch.float32, y)
    pdl = pdl_on(y.device, rows)
    _fp8_grouped_kernel[(col_tiles, tiles, split_k)](
        xq, xs, wq, ws, y, y if probs is None else probs, counts, partials, counters,
        num_experts, rows, n, k, xq.stride(0), xs.stride(0), xs.stride(1), wq.stride(0),
        wq.stride(1), ws.stride(0), ws.stride(1), y.stride(0),
        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=BLOCK, SPLIT_K=split_k,
        E_PAD=triton.next_power_of_2(num_experts), DENSE=dense, ROW_LOOP=row_loop,
        HAS_PROBS=probs is not None, PDL=pdl, SOFTWARE=INTERPRETED, num_warps=num_warps,
        num_stages=num_stages,
        launch_pdl=pdl)
    return y


def _tiles(rows_per_expert: int, k: int):
    """(block_m, block_n, num_warps, num_stages): the H100 sweep's winners (`python -m
    qarl_kernels.tune --only fp8`, docs/benchmarks.md): 64x128 tiles, and 128x128 with 8
    warps for long K (2048) at more than 512 rows per expert."""
    if rows_per_expert <= 32:
        return 32, 128, 4, 4
    if rows_per_expert > 512 and k >= 2048:
        return 128, 128, 8, 3
    return 64, 128, 4, 4


def _decode_tiles(rows: int, num_experts: int, k: int):
    """Grouped tiles below the Gluon kernel's thresholds (decode batches), from H100 sweeps of
    10 tiles at E128, EP8 beside TP attention and EP8 under DP attention, 1-448 tokens, CUDA
    graphs (docs/kernel_rounds.md round 33): each of the 40 cells within 2% of its best,
    1.00-2.05x _tiles'. 64 x 64 tiles where few rows spread over many tiles (a handful of
    rows, or fc1's long K over few experts or under 2 rows an expert), 64 x 128 from 32 rows
    an expert (fc1 from 16), 16 x 128 with 3 stages between."""
    per_expert = rows // max(1, num_experts)
    if rows <= 16 or (k >= 2048 and (num_experts < 64 or per_expert < 2)):
        return 64, 64, 4, 4
    if per_expert >= 32 or (k >= 2048 and per_expert >= 16):
        return 64, 128, 4, 4
    return 16, 128, 4, 3


def fp8_block_grouped_matmul(xq: torch.Tensor, xs: torch.Tensor, qweight,
                             tokens_per_expert: torch.Tensor, tiles=None,
                             routed_rows: int = None, probs: torch.Tensor = None) -> torch.Tensor:
    """Quantized activations (e4m3 [T, in], scales [T, in/128] as fp8_quantize_activation
    returns them) sorted by expert, FP8Block QuantizedWeight [E, out, in] -> bf16 [T, out].
    routed_rows: where xq is padded past the rows routing is expected to fill, the kernel and
    its tiles are chosen for those (checks.tile_rows); rows past the counts are skipped.
    probs [T]: each row's router prob, multiplied into its fp32 accumulator (fc2)."""
    check_activation(xq, qweight.in_features, "xq")
    num_experts = qweight.data.shape[0]
    check_tokens_per_expert(tokens_per_expert, num_experts, xq.shape[0])
    check_probs(probs, xq.shape[0])
    probs = None if probs is None else probs.contiguous()
    rows = tile_rows(xq.shape[0], routed_rows)
    counts = counts_on(xq.device, tokens_per_expert)
    if tiles is None and ws_applies(xq, qweight, rows):
        # the Gluon kernel reads the scales K-block-major (a copy of 4 B per 128 inputs when
        # they come token-major, as in packed rows); the Triton kernel takes any strides
        xs = xs if xs.stride(0) == 1 else xs.t().contiguous().t()
        return fp8_grouped_ws(xq, xs, qweight, counts, ws_tiles(rows), probs=probs)
    if tiles is None:  # where the Gluon kernel starts on Hopper, _tiles
        gluon_rows = max(ws_min_rows, ws_min_rows_per_expert * num_experts)
        tiles = (_decode_tiles(rows, num_experts, qweight.in_features) if rows < gluon_rows
                 else _tiles(rows // max(1, num_experts), qweight.in_features))
    return _launch(xq, xs, qweight, counts, num_experts, False, *tiles, routed_rows=rows,
                   probs=probs)


def fp8_block_grouped_linear(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                             tiles=None, routed_rows: int = None,
                             probs: torch.Tensor = None) -> torch.Tensor:
    """x [T, in] sorted by expert, FP8Block QuantizedWeight [E, out, in] -> [T, out]: the
    GEMM writes bf16, as SGLang's serving GEMM does, cast to x's dtype (of fp32 activations,
    the reference's fp32 output rounded to bf16).
    routed_rows, probs: as fp8_block_grouped_matmul's; the quantizer then skips the padding
    too."""
    check_activation(x, qweight.in_features)
    xq, xs = fp8_quantize_activation(x, **_routed_only(tokens_per_expert, routed_rows))
    return fp8_block_grouped_matmul(xq, xs, qweight, tokens_per_expert, tiles,
                                    routed_rows, probs).to(x.dtype)


def fp8_block_grouped_packed(packed: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                             routed_rows: int = None) -> torch.Tensor:
    """Tokens the dispatcher moved already quantized (uint8 rows of fp8_quantize_packed_rows),
    sorted by expert, @ W^T -> bf16 [T, out]."""
    return fp8_block_grouped_matmul(*unpack_activation_rows(packed, qweight.in_features),
                                    qweight, tokens_per_expert, routed_rows=routed_rows)


def fp8_swiglu_experts(x: torch.Tensor, fc1, fc2, tokens_per_expert: torch.Tensor,
                       probs: torch.Tensor, routed_rows: int = None) -> torch.Tensor:
    """The op registered for the experts' no-grad forward: fc1 (on bf16 tokens, or on uint8
    rows the dispatcher moved quantized), then the SwiGLU writing fc2's FP8 input directly
    (fp8_quantize_swiglu), then fc2 with the probs. Where x is padded past routed_rows the
    tiles are chosen for those, and the quantizers skip the rows past the counts."""
    check_expert_tokens(x)
    if x.dtype == torch.uint8:
        h = fp8_block_grouped_packed(x, fc1, tokens_per_expert, routed_rows)
    else:
        h = fp8_block_grouped_linear(x, fc1, tokens_per_expert, routed_rows=routed_rows)
    return fp8_block_grouped_matmul(
        *fp8_quantize_swiglu(h, **_routed_only(tokens_per_expert, routed_rows)), fc2,
        tokens_per_expert, routed_rows=routed_rows, probs=probs)


def _routed_only(tokens_per_expert: torch.Tensor, routed_rows) -> dict:
    """The quantizers' arguments: where x is padded past routed_rows, the routed rows only."""
    if routed_rows is None:
        return {}
    return dict(counts=tokens_per_expert, routed_rows=routed_rows)


#: waves of split_k.decode_tiles' 16 x 32 tiles, which dense calls of up to split_k.NARROW_ROWS
#: tokens take over cuBLAS's blockwise scaled_mm: H100, attention's projections, 1-32 tokens:
#: 10.0-12.4 us against 12.1-18.7 (quantizer included; docs/kernel_rounds.md round 32). Past
#: them to split_k.DECODE_MAX_ROWS the kernel takes decode_tiles' 64-row tiles while those fit
#: split_k.DECODE_WAVES waves: H200, the GEMM alone at 64-256 tokens, 1.04-1.65x scaled_mm's
#: speed where they do, 0.86-0.98x at qkv's 128-256 where they do not (round 56)
NARROW_WAVES = 5


def scaled_mm_supports(x: torch.Tensor, qweight) -> bool:
    """Whether cuBLAS's blockwise FP8 can take the call: SM90, whole 128-blocks."""
    return (x.is_cuda and is_hopper(x.device) and hasattr(F, "scaled_mm")
            and qweight.out_features % BLOCK == 0 and qweight.in_features % BLOCK == 0)


def scaled_mm_applies(x: torch.Tensor, qweight) -> bool:
    """cuBLAS where it can take the call past NARROW_ROWS tokens and the Triton kernel's
    decode tiles do not fit DECODE_WAVES waves; Triton otherwise."""
    rows = x.shape[0]
    return (rows > NARROW_ROWS and scaled_mm_supports(x, qweight)
            and (rows > DECODE_MAX_ROWS or decode_programs(rows, qweight.out_features)
                 > DECODE_WAVES * sm_count(x.device)))


def quantize_linear_input(x2: torch.Tensor, qweight, scaled_mm: bool = None):
    """x [M, in] -> (codes, scales) as fp8_block_matmul takes them: for scaled_mm the rows
    padded to 4 (padding rows are zeros). scaled_mm: the call's choice where the caller made it
    (None: scaled_mm_applies)."""
    if scaled_mm is None:
        scaled_mm = scaled_mm_applies(x2, qweight)
    return fp8_quantize_activation(x2, pad_rows_to=_SCALED_MM_PAD if scaled_mm else 1)


def dense_tiles(rows: int, n: int, k: int, device: torch.device) -> tuple:
    """The Triton kernel's (block_m, block_n, num_warps, num_stages, split_k) for a dense call:
    up to DECODE_MAX_ROWS tokens split_k.decode_tiles' (NARROW_WAVES), past them _tiles'."""
    if rows > DECODE_MAX_ROWS:
        return _tiles(rows, k) + (1,)
    block_m, block_n, split = decode_tiles(rows, n, triton.cdiv(k, BLOCK), device,
                                           NARROW_WAVES)
    return block_m, block_n, 4, 4, split


def fp8_block_matmul(xq: torch.Tensor, xs: torch.Tensor, qweight, scaled_mm: bool = None,
                     tiles: tuple = None) -> torch.Tensor:
    """Codes [M', in] and scales from quantize_linear_input @ W^T -> bf16 [M', out].
    scaled_mm: cuBLAS or this file's kernel (None: cuBLAS where scaled_mm_applies, unless tiles
    are given). tiles: the kernel's (block_m, block_n, num_warps, num_stages, split_k) in place
    of dense_tiles' (the tile sweep, `python -m qarl_kernels.tune --only dense`)."""
    if tiles is not None:
        return _launch(xq, xs, qweight, xq, 1, True, *tiles)
    if scaled_mm is None:
        scaled_mm = scaled_mm_applies(xq, qweight)
    if scaled_mm:
        ws = qweight.scale
        if ws.shape[1] % _SCALED_MM_PAD:  # whole groups of 4 K blocks (a copy per call)
            ws = F.pad(ws, (0, (-ws.shape[1]) % _SCALED_MM_PAD))
        return F.scaled_mm(xq, qweight.data.t(), xs, F.ScalingType.BlockWise1x128, ws.t(),
                           F.ScalingType.BlockWise128x128, output_dtype=torch.bfloat16)
    return _launch(xq, xs, qweight, xq, 1, True, *dense_tiles(
        xq.shape[0], qweight.out_features, qweight.in_features, xq.device))


def fp8_block_linear(x: torch.Tensor, qweight) -> torch.Tensor:
    """x [..., in] @ W^T for an FP8Block QuantizedWeight [out, in] -> [..., out], written in
    bf16 and cast to x's dtype (as fp8_block_grouped_linear)."""
    check_activation(x, qweight.in_features)
    x2 = x.reshape(-1, x.shape[-1])
    cublas = scaled_mm_applies(x2, qweight)  # once: the quantizer's row padding follows it
    y = fp8_block_matmul(*quantize_linear_input(x2, qweight, cublas), qweight,
                         scaled_mm=cublas)[:x2.shape[0]]
    return y.reshape(*x.shape[:-1], qweight.out_features).to(x.dtype)
