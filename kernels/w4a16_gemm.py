"""W4A16 GEMM reading packed int4 codes directly: y = x @ dequant(W)^T, dense or grouped.

Each weight element becomes bf16((nibble - 8) * scale), exactly the engine's operand
(megatron_qarl.quant.w4a16), and a bf16 MMA accumulates in fp32. Programs compute the
transposed tile W_tile @ x_tile^T ("swap AB"): the weight rows fill the MMA's wide side, so
decode batches of a few tokens per expert still use full tensor-core tiles.

Decode streams int4 bytes, so a K step covers BLOCK_K inputs (several quantization groups:
wide, 128-bit packed loads) and the loop holds tl.dot, which lets Triton keep `num_stages`
weight and activation tiles in flight. The unpack is ALU-lean (round 3, docs/kernel_rounds.md):
nibbles h and h + 4 of a word become a bf16 pair in one 32-bit lane by a shift and an AND-OR
into the mantissa of 128.0, then one packed bf16x2 subtraction of 136 (exact) and one packed
bf16x2 multiply by the group scale (one rounding of the exact product: the same bits as the
reference's fp32 product rounded to bf16, so the operand is unchanged and only the MMA's
summation order differs from the reference). The sm_90 build's main loop (64x16 tiles,
BLOCK_K 512) issues 3.4 instructions per weight element, round 2's 6.9. Pair plane h feeds
one MMA over inputs 8w + h + 4t (column 2w + t); x is loaded once per step as a coalesced
[BLOCK_K, BLOCK_M] tile and split into the four planes in registers. The group scales are
read as int32 words of two bf16 when the step holds an even number of groups: Triton's
pipeline copies only loads of >= 4 bytes per thread asynchronously, and a 2-byte scale load
stayed a synchronous global read in every K step (round 4). Scaling after the MMA
(one multiply per output and group) would halve the unpack again but drops the spec's
per-element bf16 rounding: on random weights 4-9% of outputs then miss the tests' tolerance.

MoE fc1 can also run with the experts' SwiGLU in the epilogue (w4a16_grouped_swiglu): a
program accumulates the gate and the up rows of its output columns over the same x tiles, so
the [T, 2F] intermediate and the activation's kernels disappear. fc2 multiplies each row's
rounded output by its router prob, as SGLang's Marlin MoE does (quant.base.scale_rows).

On Hopper the grouped ops hand batches of up to 128 tokens per expert to the Gluon kernel
(w4a16_gluon), which unpacks into the registers of asynchronous wgmmas; dense calls in CUDA
graphs, up to DENSE_GLUON_MAX_ROWS tokens, take it as one expert with K split. Its tiles and
launch options per shape are w4a16_gluon_rules'. Dense calls of one token take w4a16_gemv.
"""
import warnings
from dataclasses import dataclass, replace

import torch
import triton
import triton.language as tl

from megatron_qarl.quant.base import scale_rows
from megatron_qarl.quant.ops import gated_activation

from .checks import check_activation, check_probs, check_tokens_per_expert, counts_on, \
    scale_words_fit, tile_rows
from .expert_tiles import program_tile, row_tile_count, row_tile_grid, tile_bound
from .gluon_hopper import sm_count
from .grouped_mm import grouped_mm, torch_grouped_mm_available
from .numerics import INTERPRETED, bf16_pairs, int4_pair_operand, mma, swiglu, to_bf16
from .split_k import k_slice, split_buffers, split_for, split_ring, store_split
from .w4a16_gemv import w4a16_gemv
from .w4a16_gluon import applies as gluon_applies, w4a16_grouped_gluon
from .w4a16_gluon_rules import DENSE_GLUON_MAX_ROWS, GLUON_MAX_ROWS_PER_EXPERT, \
    gluon_dense_tiles, gluon_launch, gluon_pdl, gluon_swiglu_tiles, gluon_tiles
from .w4a16_grouped_ws import applies as ws_applies, w4a16_grouped_ws
from .w4a16_lanes import has_lane_codes, lane_codes
from .w4a16_operand import w4a16_operand


@dataclass(frozen=True)
class W4A16Config:
    block_m: int  # token rows per program (MMA N side)
    block_n: int  # weight rows per program (MMA M side)
    block_k: int = 256  # inputs per K step, a power of two >= 128; halved while it misses K
    split_k: int = 1  # K slices, summed in slice order (split_k.split_sum; grids of few programs)
    num_warps: int = 4
    num_stages: int = 3


@triton.jit
def _weight_step(acc, w_rows, s_rows, n_mask, step, K, x0, x1, x2, x3, GROUP: tl.constexpr,
                 BLOCK_K: tl.constexpr, EVEN_K: tl.constexpr, SCALE_PAIRS: tl.constexpr,
                 SOFTWARE: tl.constexpr):
    """acc + one K step of these weight rows' int4 codes (the four pair planes) @ x."""
    WORDS: tl.constexpr = BLOCK_K // 8
    GROUPS: tl.constexpr = BLOCK_K // GROUP
    words = tl.arange(0, WORDS)
    groups = tl.arange(0, GROUPS)
    w_mask = n_mask[:, None]
    s_mask = n_mask[:, None]
    if not EVEN_K:  # a partial last step (K below 128 or not a multiple of it); masks
        w_mask = w_mask & (step * WORDS + words[None, :] < K // 8)  # off the hot path
        s_mask = s_mask & (step * GROUPS + groups[None, :] < K // GROUP)
    packed = tl.load(w_rows + step * WORDS + words[None, :], mask=w_mask, other=0)
    if SCALE_PAIRS:  # s_ptr is the int32 view of the scales: a pipelined 4-byte load
        pairs = step * (GROUPS // 2) + tl.arange(0, GROUPS // 2)
        scale = bf16_pairs(tl.load(s_rows + pairs[None, :], mask=s_mask, other=0), SOFTWARE)
    else:
        scale = tl.load(s_rows + step * GROUPS + groups[None, :], mask=s_mask,
                        other=0.0)  # 0 outside K: those products vanish
    scale = tl.reshape(tl.broadcast_to(scale[:, :, None], [n_mask.shape[0], GROUPS, GROUP // 4]),
                       [n_mask.shape[0], 2 * WORDS])  # the scale of each operand column's group
    acc = mma(int4_pair_operand(packed, 0, scale, SOFTWARE), tl.trans(x0), acc, SOFTWARE)
    acc = mma(int4_pair_operand(packed, 1, scale, SOFTWARE), tl.trans(x1), acc, SOFTWARE)
    acc = mma(int4_pair_operand(packed, 2, scale, SOFTWARE), tl.trans(x2), acc, SOFTWARE)
    return mma(int4_pair_operand(packed, 3, scale, SOFTWARE), tl.trans(x3), acc, SOFTWARE)


@triton.jit(do_not_specialize=["num_experts", "total_rows"])  # batch sizes share a compile
def _w4a16_gemm_kernel(
    x_ptr, w_ptr, s_ptr, y_ptr, counts_ptr, p_ptr, partials_ptr, counters_ptr, num_experts,
    total_rows, N, K, stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_ym,
    GROUP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    E_PAD: tl.constexpr, DENSE: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr,
    SCALE_PAIRS: tl.constexpr, SWIGLU: tl.constexpr, HAS_PROBS: tl.constexpr,
    ROW_LOOP: tl.constexpr, SOFTWARE: tl.constexpr,
):
    """N: output columns; with SWIGLU the weight has 2N rows [gate; up] and each program
    accumulates the gate and the up rows of its columns; HAS_PROBS (not with SWIGLU): each
    row's rounded output times its router prob p_ptr[row], rounded again (Marlin's order,
    numerics.scaled). ROW_LOOP:
    the grid's row axis is capped below the bound of x's rows (expert_tiles.row_tile_grid), so
    programs walk the row tiles; else one row tile a program."""
    if ROW_LOOP:
        tiles = row_tile_count(counts_ptr, num_experts, BLOCK_M, E_PAD)
        for tile in range(tl.program_id(1), tiles, tl.num_programs(1)):
            _w4a16_tile(tile, x_ptr, w_ptr, s_ptr, y_ptr, counts_ptr, p_ptr, partials_ptr,
                        counters_ptr, num_experts, total_rows, N, K, stride_xm, stride_we,
                        stride_wn, stride_se, stride_sn, stride_ym, GROUP, BLOCK_M, BLOCK_N,
                        BLOCK_K, E_PAD, DENSE, SPLIT_K, EVEN_K, SCALE_PAIRS, SWIGLU, HAS_PROBS,
                        SOFTWARE)
    else:
        _w4a16_tile(tl.program_id(1), x_ptr, w_ptr, s_ptr, y_ptr, counts_ptr, p_ptr,
                    partials_ptr, counters_ptr, num_experts, total_rows, N, K, stride_xm,
                    stride_we, stride_wn, stride_se, stride_sn, stride_ym, GROUP, BLOCK_M,
                    BLOCK_N, BLOCK_K, E_PAD, DENSE, SPLIT_K, EVEN_K, SCALE_PAIRS, SWIGLU,
                    HAS_PROBS, SOFTWARE)


@triton.jit
def _w4a16_tile(
    tile, x_ptr, w_ptr, s_ptr, y_ptr, counts_ptr, p_ptr, partials_ptr, counters_ptr,
    num_experts, total_rows, N, K,
    stride_xm, stride_we, stride_wn, stride_se, stride_sn, stride_ym,
    GROUP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    E_PAD: tl.constexpr, DENSE: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr,
    SCALE_PAIRS: tl.constexpr, SWIGLU: tl.constexpr, HAS_PROBS: tl.constexpr,
    SOFTWARE: tl.constexpr,
):
    """One row tile of the program's columns and K slice."""
    expert, rows, row_mask, offs_n, n_mask, has_rows = program_tile(
        counts_ptr, num_experts, total_rows, N, tile, BLOCK_M, BLOCK_N, E_PAD, DENSE)

    s_lo, s_hi = k_slice(K, has_rows, BLOCK_K, SPLIT_K)

    w_rows = w_ptr + expert.to(tl.int64) * stride_we + offs_n[:, None] * stride_wn
    s_rows = s_ptr + expert.to(tl.int64) * stride_se + offs_n[:, None] * stride_sn
    x_rows = x_ptr + rows[None, :].to(tl.int64) * stride_xm

    acc = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32)
    acc_up = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32)
    for step in range(s_lo, s_hi):
        # x [BLOCK_K, BLOCK_M] in one coalesced load, split into the four operand planes:
        # input 8w + 4t + 2a + b feeds column 2w + t of plane h = 2a + b
        xk = step * BLOCK_K + tl.arange(0, BLOCK_K)
        x_mask = row_mask[None, :] if EVEN_K else row_mask[None, :] & (xk[:, None] < K)
        xs = tl.load(x_rows + xk[:, None], mask=x_mask, other=0.0)
        xs = tl.reshape(tl.trans(xs), [BLOCK_M, BLOCK_K // 4, 2, 2])
        x_even, x_odd = tl.split(xs)
        x0, x2 = tl.split(x_even)
        x1, x3 = tl.split(x_odd)
        acc = _weight_step(acc, w_rows, s_rows, n_mask, step, K, x0, x1, x2, x3, GROUP,
                           BLOCK_K, EVEN_K, SCALE_PAIRS, SOFTWARE)
        if SWIGLU:
            acc_up = _weight_step(acc_up, w_rows + N * stride_wn, s_rows + N * stride_sn,
                                  n_mask, step, K, x0, x1, x2, x3, GROUP, BLOCK_K, EVEN_K,
                                  SCALE_PAIRS, SOFTWARE)

    y_ptrs = y_ptr + rows[None, :].to(tl.int64) * stride_ym + offs_n[:, None]
    mask = row_mask[None, :] & n_mask[:, None]
    if SWIGLU:
        tl.store(y_ptrs, to_bf16(swiglu(acc, acc_up, SOFTWARE), SOFTWARE), mask=mask)
    else:
        prob = tl.zeros([BLOCK_M], dtype=tl.float32)
        if HAS_PROBS:
            prob = tl.load(p_ptr + rows, mask=row_mask, other=0.0).to(tl.float32)
        store_split(acc, y_ptrs, mask, partials_ptr, counters_ptr,
                    tile * tl.num_programs(0) + tl.program_id(0), SPLIT_K, SOFTWARE,
                    prob[None, :], HAS_PROBS, True)


def default_config(rows: int, num_experts: int, n: int, k: int, group: int) -> W4A16Config:
    """Tiles by tokens per expert: the winners of the H100 sweep of this kernel in CUDA graphs
    (`python -m qarl_kernels.tune --only w4a16 --decode`, docs/kernel_rounds.md rounds 4-5). At
    decode sizes the kernel is latency-bound, so 256-input K steps, which need fewer registers
    and fit more CTAs per SM, win. Past one token, short K (768: three steps) prefers 8 warps.
    Past 8 tokens per expert the tiles hold 32 tokens (64 from 17 to 32, with 128-input
    steps, where half the unpacked operand in registers beats longer steps), and past 64 they
    hold 128, so each weight tile is unpacked once."""
    per_expert = max(1, rows // max(1, num_experts))
    if rows <= 16:  # one token (top-k rows): the smallest tiles, most programs in flight
        return W4A16Config(block_m=16, block_n=64)
    if per_expert <= 16 and k <= 1024:
        if per_expert <= 8:
            return W4A16Config(block_m=16, block_n=128, num_warps=8, num_stages=2)
        return W4A16Config(block_m=32, block_n=128, block_k=128)
    if per_expert <= 8:
        return W4A16Config(block_m=16, block_n=64)
    if 16 < per_expert <= 32:
        return W4A16Config(block_m=64, block_n=128, block_k=128)
    if per_expert <= 64:
        return W4A16Config(block_m=32, block_n=128)
    return W4A16Config(block_m=128, block_n=128, num_warps=8)


def dense_config(rows: int, n: int, k: int, group: int, device: torch.device) -> W4A16Config:
    """Tiles of a dense call (attention's projections): at decode sizes 64-row weight tiles over
    128-input K steps, K split until about six waves of 16- and 32-token tiles run, two of
    64-token ones (split_k.split_for; H100 sweep, docs/kernel_rounds.md round 32); training
    sizes take default_config."""
    if rows > 256:
        return default_config(rows, 1, n, k, group)
    block_m = 16 if rows <= 16 else 32 if rows <= 128 else 64
    programs = triton.cdiv(n, 64) * triton.cdiv(rows, block_m)
    split = split_for(programs, triton.cdiv(k, 128), device, waves=6 if block_m <= 32 else 2,
                      min_steps=4)
    return W4A16Config(block_m=block_m, block_n=64, block_k=128, split_k=split)


def swiglu_config(rows: int, num_experts: int, n: int, k: int, group: int) -> W4A16Config:
    """Tiles of the fused fc1 + SwiGLU (n: gate + up rows). A program reads the gate and the
    up rows of its columns, so from 32-token tiles up the unfused tile's weight rows are halved
    to keep its registers and shared memory (round 5). 16-token tiles keep theirs, and
    128-token tiles drop a pipeline stage to fit in shared memory."""
    cfg = default_config(rows, num_experts, n, k, group)
    if cfg.block_m < 32:
        return cfg
    return replace(cfg, block_n=cfg.block_n // 2,
                   num_stages=2 if cfg.block_m >= 128 else cfg.num_stages)


def block_k_for(k: int, wanted: int) -> int:
    """The largest power of two in [128, wanted] that divides K, else 128 (the kernel then
    masks a partial last step). Not below 128: each pair plane's MMA spans BLOCK_K / 4
    inputs, and tl.dot needs 16."""
    block = max(128, wanted)
    while block > 128 and k % block:
        block //= 2
    return block


def _launch(x2, qweight, counts, num_experts, dense, config, swiglu=False, probs=None,
            routed_rows=None):
    """routed_rows: the rows the default tiles and the grid are sized for (tile_rows); rows
    past them still run (expert_tiles.row_tile_grid). probs: see the kernel's HAS_PROBS."""
    data, scale = qweight.data, qweight.scale
    group = qweight.scheme.group_size
    n, k = qweight.shape[-2], qweight.shape[-1]
    n_out = n // 2 if swiglu else n
    rows = x2.shape[0]
    if data.dim() == 2:
        data, scale = data.unsqueeze(0), scale.unsqueeze(0)
    if config is None and dense:
        config = dense_config(rows, n, k, group, x2.device)
    rule = swiglu_config if swiglu else default_config
    cfg = config or rule(tile_rows(rows, routed_rows), num_experts, n, k, group)
    if swiglu and cfg.split_k > 1:
        raise ValueError("the fused SwiGLU epilogue needs whole K per program: split_k=1")
    y = torch.empty(rows, n_out, device=x2.device, dtype=x2.dtype)
    if rows == 0:
        return y
    if dense:
        tiles, row_loop = triton.cdiv(rows, cfg.block_m), False
    else:
        tiles, row_loop = row_tile_grid(rows, tile_rows(rows, routed_rows), num_experts,
                                        cfg.block_m)
    col_tiles = triton.cdiv(n_out, cfg.block_n)
    split_k, partials, counters = split_buffers(
        cfg.split_k, col_tiles * (tiles if dense else tile_bound(rows, num_experts, cfg.block_m)),
        cfg.block_m * cfg.block_n, torch.float32, y)
    grid = (col_tiles, tiles, split_k)
    block_k = block_k_for(k, cfg.block_k)
    even_k = k % block_k == 0
    pairs = even_k and (block_k // group) % 2 == 0 and scale_words_fit(scale)
    if pairs:
        scale = scale.view(torch.int32)
    _w4a16_gemm_kernel[grid](
        x2, data, scale, y, counts, x2 if probs is None else probs, partials, counters,
        num_experts, rows, n_out, k, x2.stride(0), data.stride(0), data.stride(1),
        scale.stride(0), scale.stride(1), y.stride(0),
        GROUP=group, BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=block_k,
        E_PAD=triton.next_power_of_2(num_experts), DENSE=dense, SPLIT_K=split_k,
        EVEN_K=even_k, SCALE_PAIRS=pairs, SWIGLU=swiglu, HAS_PROBS=probs is not None,
        ROW_LOOP=row_loop, SOFTWARE=INTERPRETED,
        num_warps=cfg.num_warps, num_stages=cfg.num_stages,
    )
    return y


def _check_bf16(x: torch.Tensor) -> None:
    if x.dtype != torch.bfloat16:
        raise ValueError(
            f"x: dtype {x.dtype}; the W4A16 kernels take bf16 activations (the engine's "
            f"operand dtype): cast with x.to(torch.bfloat16)"
        )


#: tokens from which a dense call outside the Gluon kernel's reach multiplies the bf16 operand
#: (cuBLAS) instead of reading int4 codes: H100, attention's projections (docs/benchmarks.md,
#: "Dense GEMMs"): this file's kernel takes 1.9-2.2x bf16's time at 256 tokens, where
#: dequantizing (a write of 2 B/param) then bf16 costs about 1.7x; with the operand kept for
#: the step (--quant-keep-operand) bf16's time beats this file's kernel from 64 tokens
DENSE_DEQUANT_ROWS = 256
DENSE_KEPT_OPERAND_ROWS = 64
#: tokens up to which a dense call takes w4a16_gemv (CUDA cores, launched with PDL), eagerly
#: and in CUDA graphs. H200, attention's projections at one token, CUDA graphs of 10 calls
#: with the weights rotated past L2 (docs/kernel_rounds.md round 54, seven rounds): 1.10x
#: (qkv), 1.56x (o_proj), 1.28x (qkv TP2), 1.18x (o_proj TP2) the speed of round 53's route
#: (this file's kernel with its products on CUDA cores); a GEMV of 2-4 tokens took 0.44-1.18x
#: the Gluon kernel's speed, 0.79x at qkv with 2
DENSE_GEMV_ROWS = 1
#: tokens up to which a dense call in CUDA-graph capture with the operand kept takes the Gluon
#: kernel (without it, DENSE_GLUON_MAX_ROWS): 0.77-1.04x the kept operand's time (round 34)
DENSE_KEPT_GLUON_MAX_ROWS = 64


def w4a16_linear(x: torch.Tensor, qweight, config: W4A16Config = None) -> torch.Tensor:
    """x [..., in] bf16 @ W^T for one W4A16 QuantizedWeight [out, in] -> [..., out] bf16. One
    token (DENSE_GEMV_ROWS) through w4a16_gemv; past it in CUDA-graph capture on Hopper up to
    DENSE_GLUON_MAX_ROWS tokens (DENSE_KEPT_GLUON_MAX_ROWS with the operand kept) the Gluon
    kernel (gluon_dense_tiles); else from DENSE_DEQUANT_ROWS tokens (DENSE_KEPT_OPERAND_ROWS
    with the operand kept) through the bf16 operand, unless a config names this file's
    tiles."""
    _check_bf16(x)
    check_activation(x, qweight.in_features)
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    rows = x2.shape[0]
    gluon_rows = DENSE_KEPT_GLUON_MAX_ROWS if qweight.keep_operand else DENSE_GLUON_MAX_ROWS
    gluon = DENSE_GEMV_ROWS < rows <= gluon_rows
    tiles = _gluon_route(x2, qweight, config, rows) if gluon else None
    if rows == 0:
        y = x2.new_empty(0, qweight.out_features)
    elif config is None and rows <= DENSE_GEMV_ROWS:
        y = w4a16_gemv(x2, qweight)
    elif tiles:
        y = w4a16_dense_gluon(x2, qweight, tiles)
    elif config is None and rows >= (DENSE_KEPT_OPERAND_ROWS if qweight.keep_operand
                                     else DENSE_DEQUANT_ROWS):
        y = x2 @ w4a16_operand(qweight, None).t()
    else:
        y = _launch(x2, qweight, x2, 1, True, config)  # counts unused in dense mode
    return y.reshape(*x.shape[:-1], qweight.out_features)


def w4a16_dense_gluon(x: torch.Tensor, qweight, tiles: tuple = None) -> torch.Tensor:
    """x [T, in] bf16 @ W^T through the Gluon kernel as one expert, with gluon_dense_tiles'
    tiles or the given ones (block_m, block_n, stages, groups, split_k): what w4a16_linear
    takes in CUDA-graph capture, callable eagerly (after an eager call on x's device, in
    capture)."""
    rows = x.shape[0]
    tiles = tiles or gluon_dense_tiles(rows, qweight.out_features, qweight.in_features,
                                       sm_count(x.device))
    if tiles is None:
        raise ValueError(f"x: {rows} rows, K={qweight.in_features}: the rule has tiles up to "
                         f"{DENSE_GLUON_MAX_ROWS} rows and for K in whole pairs of 128-input "
                         f"groups; pass tiles, or call w4a16_linear")
    return w4a16_grouped_gluon(x, qweight, _dense_counts(x), *tiles[:3], groups=tiles[3],
                               split_k=tiles[4], pdl=gluon_pdl(rows))


_row_counts = {}  # device -> int32 arange(DENSE_GLUON_MAX_ROWS + 1)


def _dense_counts(x: torch.Tensor):
    """The counts [1] = rows of x that the Gluon kernel reads for a dense call (one expert): a
    view into a per-device arange made on the first eager call, so a captured call writes no
    tensor; None while capturing before any eager call on this device."""
    table = _row_counts.get(x.device)
    if table is None:
        if _capturing(x):
            return None
        table = _row_counts[x.device] = torch.arange(DENSE_GLUON_MAX_ROWS + 1, device=x.device,
                                                     dtype=torch.int32)
    return table[x.shape[0]:x.shape[0] + 1]


def _capturing(x: torch.Tensor) -> bool:
    return x.is_cuda and torch.cuda.is_current_stream_capturing()


def _gluon_route(x: torch.Tensor, qweight, config, rows: int):
    """The Gluon kernel's tiles for this grouped call with tiles chosen for `rows` (tile_rows),
    or for this dense call (gluon_dense_tiles; eager dense calls take this file's kernel, whose
    host launch is 30 us shorter), or None for this file's kernel.
    The Gluon kernel reads the codes in lane order, made once per weight. An eager call of a
    batch that a CUDA graph would hand to it makes them (the usual warm-up before capture), so
    the graph does not record the reorder; a capture that finds none takes this file's kernel
    and warns."""
    if config is not None:
        return None
    k, n = qweight.in_features, qweight.data.shape[-2]
    dense = qweight.data.dim() == 2
    if dense:  # what a CUDA graph of this batch takes
        tiles = x.is_cuda and gluon_dense_tiles(rows, n, k, sm_count(x.device))
    else:
        tiles = gluon_tiles(rows, qweight.data.shape[0], n, k)
    if not tiles or not gluon_applies(x, qweight):
        return None
    if not _capturing(x):
        lane_codes(qweight)
        split_ring(x.device)  # what the graphs captured after it read: the split's counters
        if dense:  # and the counts
            _dense_counts(x)
            return None
        return gluon_tiles(rows, qweight.data.shape[0], n, k, capturing=False)
    if has_lane_codes(qweight) and (not dense or _dense_counts(x) is not None):
        return tiles
    warnings.warn("W4A16 GEMM: this CUDA-graph capture is the weight's first call at this "
                  "batch size, so it takes the Triton kernel; the Hopper kernel needs the "
                  "codes reordered once outside capture. Run one eager step before capturing.")
    return None


def w4a16_grouped_matmul(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                         config: W4A16Config = None, routed_rows: int = None,
                         probs: torch.Tensor = None) -> torch.Tensor:
    """Rows of x [T, in] sorted by expert, counts [E]; qweight [E, out, in] -> [T, out]. Picks
    the Gluon kernel where gluon_tiles does (in CUDA-graph capture or eager), unless a config
    names this file's tiles. routed_rows: where x is padded past the rows routing is expected
    to fill, tiles are chosen for those (checks.tile_rows); rows past the counts are skipped.
    probs [T]: each row's router prob, multiplying its rounded output (fc2;
    quant.base.scale_rows)."""
    _check_bf16(x)
    check_activation(x, qweight.in_features)
    num_experts = qweight.data.shape[0]
    check_tokens_per_expert(tokens_per_expert, num_experts, x.shape[0])
    check_probs(probs, x.shape[0])
    rows = tile_rows(x.shape[0], routed_rows)
    counts = counts_on(x.device, tokens_per_expert)
    x = x.contiguous()
    probs = None if probs is None else probs.contiguous()
    tiles = _gluon_route(x, qweight, config, rows)
    if tiles:
        shape = (rows, num_experts, qweight.out_features, x.shape[1])
        return w4a16_grouped_gluon(x, qweight, counts, *tiles, probs=probs,
                                   **gluon_launch(shape, tiles, x_rows=x.shape[0]))
    return _launch(x, qweight, counts, num_experts, False, config, probs=probs,
                   routed_rows=rows)


def w4a16_grouped_swiglu(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                         config: W4A16Config = None, routed_rows: int = None) -> torch.Tensor:
    """MoE fc1 with its gated activation in the epilogue: qweight [E, 2F, in] = [gate; up]
    -> silu(x @ gate^T) * (x @ up^T), [T, F] bf16, bit for bit
    ops.reference_gated_activation of the unfused GEMM's output (w4a16_grouped_matmul with the
    same config), up to fp32 summation order where either call splits K (gluon_split_k).
    Saves the [T, 2F] intermediate and the activation's kernels (decode: their launches).
    routed_rows: as w4a16_grouped_matmul's."""
    _check_bf16(x)
    check_activation(x, qweight.in_features)
    num_experts = qweight.data.shape[0]
    check_tokens_per_expert(tokens_per_expert, num_experts, x.shape[0])
    if qweight.out_features % 2:
        raise ValueError(f"qweight: {qweight.out_features} output rows; the fused SwiGLU takes "
                         f"fc1 weights [gate; up] with an even row count")
    rows = tile_rows(x.shape[0], routed_rows)
    counts = counts_on(x.device, tokens_per_expert)
    x = x.contiguous()
    tiles = _gluon_route(x, qweight, config, rows)
    if tiles:  # the unfused op's bits where neither splits K; it takes the Gluon GEMM here too
        shape = (rows, num_experts, qweight.out_features, x.shape[1])
        tiles = gluon_swiglu_tiles(*shape)
        return w4a16_grouped_gluon(x, qweight, counts, *tiles,
                                   **gluon_launch(shape, tiles, swiglu=True,
                                                  x_rows=x.shape[0]))
    return _launch(x, qweight, counts, num_experts, False, config, swiglu=True,
                   routed_rows=rows)


#: tokens per expert from which torch._grouped_mm on the bf16 operand beats the int4-reading
#: kernel (compute-bound: the in-loop unpack costs as much as the MMA). H100, bench of round 5:
#: dequantizing in the call too, the kernel still wins at 256 per expert (1.07-1.26x at E128
#: and TP2, M=4096) and loses at 512 (0.92-0.94x, EP8 M=1024); with the operand kept for the
#: step (--quant-keep-operand) _grouped_mm alone wins at 256 (1.31-1.52x).
DEQUANT_ROWS_PER_EXPERT = 512
KEPT_OPERAND_ROWS_PER_EXPERT = 256
#: tokens per expert over which Hopper takes the warp-specialized kernel (w4a16_grouped_ws)
#: without a kept operand, before this file's kernel and dequantize + _grouped_mm. H200, round
#: 37: 0.93-1.09x bf16's time at 256 per expert (E128 and TP2, M=4096), 1.07-1.14x at 512 and
#: 1.05x at 1024 where dequantize + _grouped_mm took 1.29-1.30x and 1.15x; at 2048 (EP8,
#: M=4096) it took 1.08x and the kernel 1.11x. It starts where the Gluon kernel stops: with
#: its m64 row blocks (round 40) it takes 0.52-0.72x the time of this file's kernel there
#: (E128, TP2 eager; EP8 in CUDA graphs); at 128 per expert it took 0.95-1.03x the Gluon
#: kernel's time eager, 1.21-1.24x in EP8's graphs (docs/kernel_rounds.md).
WS_ROWS_PER_EXPERT = range(GLUON_MAX_ROWS_PER_EXPERT + 1, 2048)


def w4a16_grouped_linear(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                         routed_rows: int = None, probs: torch.Tensor = None):
    """The op registered for W4A16 grouped GEMMs on CUDA: picks the path by tokens/expert
    (the large-M path reuses the operand a keep_operand weight holds: w4a16_operand), counting
    routed_rows where x is padded past them (checks.tile_rows). probs: as
    w4a16_grouped_matmul's; every path multiplies the rounded output by them. torch._grouped_mm
    has no epilogue, so where dequantize + _grouped_mm would run, fc2 with probs takes the
    warp-specialized kernel on Hopper, saving a pass over the output (EP8 experts block at
    2048 rows an expert 808 -> 686 us, H200, session 70); a kept operand keeps _grouped_mm and
    that pass (quant.base.scale_rows)."""
    num_experts = qweight.data.shape[0]
    threshold = KEPT_OPERAND_ROWS_PER_EXPERT if qweight.keep_operand else DEQUANT_ROWS_PER_EXPERT
    rows = tile_rows(x.shape[0], routed_rows)
    bf16_operand = rows >= threshold * num_experts and torch_grouped_mm_available(x.device)
    ws = (not qweight.keep_operand
          and (rows // num_experts in WS_ROWS_PER_EXPERT or bf16_operand and probs is not None)
          and ws_route(x, qweight))
    bf16_operand = bf16_operand and not ws
    if not (ws or bf16_operand):
        return w4a16_grouped_matmul(x, qweight, tokens_per_expert, routed_rows=routed_rows,
                                    probs=probs)
    _check_bf16(x)
    check_activation(x, qweight.in_features)
    check_tokens_per_expert(tokens_per_expert, num_experts, x.shape[0])
    check_probs(probs, x.shape[0])
    if ws:
        return w4a16_grouped_ws(x, qweight, counts_on(x.device, tokens_per_expert),
                                probs=probs)
    weight = w4a16_operand(qweight, tokens_per_expert)
    y = grouped_mm(x, weight.transpose(1, 2), tokens_per_expert, use_torch=True)
    return scale_rows(y, probs, y.dtype, after_rounding=True)


def ws_route(x: torch.Tensor, qweight, applies=ws_applies) -> bool:
    """The warp-specialized kernel (applies: its forward's or its grad_input's test of the
    tensors) reads the lane-order codes: outside CUDA-graph capture it makes them (once per
    weight), in capture only if they exist (another path otherwise)."""
    return applies(x, qweight) and (not _capturing(x) or has_lane_codes(qweight))


#: tokens per expert up to which the fused fc1 + SwiGLU beats the GEMM then torch's SwiGLU
#: (H100, CUDA graphs: 1.45-1.52x at M=1, 1.0-1.28x at 16-64 rows per expert; 0.58x with the
#: 128-token tiles of W13 EP8 M=256, 128 rows per expert); docs/benchmarks.md. Where the Gluon
#: kernel runs, its own fused epilogue is taken instead (gluon_swiglu_tiles).
FUSED_SWIGLU_ROWS_PER_EXPERT = 64


def w4a16_grouped_swiglu_op(x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                            routed_rows: int = None) -> torch.Tensor:
    """The op registered for fc1 + gated activation on CUDA: fused up to
    FUSED_SWIGLU_ROWS_PER_EXPERT and wherever the Gluon kernel runs, else the GEMM op then
    torch's activation."""
    rows = tile_rows(x.shape[0], routed_rows)
    if (rows > FUSED_SWIGLU_ROWS_PER_EXPERT * qweight.data.shape[0]
            and not _gluon_route(x, qweight, None, rows)):
        return gated_activation(w4a16_grouped_linear(x, qweight, tokens_per_expert, routed_rows))
    return w4a16_grouped_swiglu(x, qweight, tokens_per_expert, routed_rows=routed_rows)


def w4a16_swiglu_experts(x: torch.Tensor, fc1, fc2, tokens_per_expert: torch.Tensor,
                         probs: torch.Tensor, routed_rows: int = None) -> torch.Tensor:
    """The op registered for the experts' no-grad forward: fc1 + SwiGLU (fused up to its
    batch limit), then fc2 with the probs; tiles for routed_rows where x is padded past them."""
    h = w4a16_grouped_swiglu_op(x, fc1, tokens_per_expert, routed_rows)
    return w4a16_grouped_linear(h, fc2, tokens_per_expert, routed_rows, probs)
