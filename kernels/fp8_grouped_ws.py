"""Warp-specialized FP8 block-scaled grouped GEMM for Hopper (Gluon): the large-batch MoE path.

Blockwise FP8 needs each 128-deep partial product scaled by its own activation and weight
scales before it joins the fp32 accumulator. In one warpgroup that serializes the tensor core
(wgmma of block k) and the CUDA cores (its promotion): Triton waits for every non-chained dot
(docs/kernel_rounds.md, round 4). Here one warp streams the operand tiles with TMA into a ring of
shared-memory stages (with the block's scales, by cp.async, so no consumer waits on a global
load), and two consumer warpgroups own 64 token rows each of a 128-row tile:
while one promotes its block, the other's wgmma runs (the DeepGEMM schedule). The kernel is
persistent (one CTA per SM walks the tiles), so the loader fills the next tile's stages while
the consumers finish and store the current one: with K=768 (W2) a tile has only six K blocks
and a CTA per tile would spend as long on its pipeline fill and epilogue as on its MMAs. Same
numbers as fp8_gemm._fp8_grouped_kernel: per K block a fresh fp32 wgmma, then
acc + partial * (sa * sb).

Gluon has no interpreter, so CI compiles this kernel for sm_90 offline and the H100 runs check
it against the reference; fp8_gemm falls back to the Triton kernel wherever it does not apply.
"""
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma, \
    warpgroup_mma, warpgroup_mma_wait
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from megatron_qarl.quant.fp8_block import BLOCK

from .expert_tiles import tile_bound
from .gluon_hopper import cp_async_load, expert_tables, is_hopper, mbarriers, sm_count, \
    table_size, tile_of, tma_load, tma_store
from .launch_cache import CachedLaunch


ROWS_PER_CONSUMER = 64  # one warpgroup's wgmma M
BLOCK_M = 2 * ROWS_PER_CONSUMER


@gluon.jit
def _partial(a, b, acc, acc_scale):
    """acc + (a @ b) * acc_scale[:, None], the 128-deep partial in a fresh fp32 wgmma."""
    # a dead zero tile as C: passing acc would tie up a copy of it for the wgmma's output
    partial = warpgroup_mma(a, b, gl.zeros_like(acc), use_acc=False, is_async=True)
    partial = warpgroup_mma_wait(num_outstanding=0, deps=(partial, ))
    return acc + partial * gl.expand_dims(acc_scale, 1)


@gluon.jit
def _store(y_ptr, acc, rows, row_mask, cols, N, stride_ym):
    ptrs = y_ptr + gl.expand_dims(rows.to(gl.int64) * stride_ym, 1) + gl.expand_dims(cols, 0)
    mask = gl.expand_dims(row_mask, 1) & gl.expand_dims(cols < N, 0)
    gl.store(ptrs, acc.to(gl.bfloat16), mask=mask)


@gluon.jit
def _stage_store(c_desc, c_buf, acc, row, col):
    c_buf.store(acc.to(gl.bfloat16))
    fence_async_shared()
    tma_store(c_desc, [row, col], c_buf)


@gluon.jit
def _load_partition(args):
    """One warp fills each stage: the scales by cp.async, then the operand tiles by TMA, all
    completing the stage's ready barrier. The scales ride in the ring so that no consumer waits
    on a global load: loading them in the consumers, one block ahead, cost 30% of the time at
    EP8 (docs/kernel_rounds.md, round 9)."""
    a_desc, b_desc, _ = args[0]
    a_bufs, b_bufs, _ = args[1]
    ready, empty = args[2]
    tables = args[3]
    xs_ptr, ws_ptr, _, _ = args[4]
    num_experts, N, K, n_blocks, num_tiles, num_rows = args[5]
    stride_xsk, stride_wse, stride_wsn, _ = args[6]
    sa_bufs, sb_bufs = args[7]
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    HALF: gl.constexpr = a_bufs.type.shape[1]
    BLOCK_N: gl.constexpr = b_bufs.type.shape[1]
    BLOCK_K: gl.constexpr = b_bufs.type.shape[2]
    nbytes: gl.constexpr = 2 * a_desc.block_type.nbytes + b_desc.block_type.nbytes
    lanes = gl.arange(0, 2 * HALF, layout=gl.BlockedLayout([4], [32], [1], [0]))
    pair = gl.arange(0, 2, layout=gl.BlockedLayout([2], [32], [1], [0]))
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts, 2 * HALF, 1)
        steps = gl.where(row_start < row_end, gl.cdiv(K, BLOCK_K), 0)
        w_row = expert * N + nb * BLOCK_N
        rows = row_start + lanes
        # activation scales are K-block-major ([KB, rows] in memory); the tile's one or two
        # weight scale blocks per K block
        sa_ptrs = xs_ptr + rows
        sb_ptrs = (ws_ptr + expert.to(gl.int64) * stride_wse
                   + (nb * BLOCK_N // BLOCK_K + pair) * stride_wsn)
        sb_mask = (nb * BLOCK_N + pair * BLOCK_K) < N
        for kb in range(steps):
            s = it % STAGES
            mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)  # fresh: phase 1 complete
            bar = ready.index(s)
            # the copies' arrive first: it adds its pending count before expect's arrival
            cp_async_load(sa_bufs.index(s), sa_ptrs + kb * stride_xsk, mask=rows < num_rows)
            cp_async_load(sb_bufs.index(s), sb_ptrs + kb, mask=sb_mask)
            async_copy.mbarrier_arrive(bar)
            mbarrier.expect(bar, nbytes)
            tma_load(a_desc, [row_start, kb * BLOCK_K], bar, a_bufs.index(2 * s))
            tma_load(a_desc, [row_start + HALF, kb * BLOCK_K], bar, a_bufs.index(2 * s + 1))
            tma_load(b_desc, [w_row, kb * BLOCK_K], bar, b_bufs.index(s))
            it += 1


@gluon.jit
def _consume(args, HALF_INDEX: gl.constexpr, HAS_PROBS: gl.constexpr):
    """One warpgroup: HALF token rows of every tile of this CTA. A 256-wide tile (3/4 the L2
    bytes per FLOP of a 128-wide one, 1.03-1.13x faster at training sizes; the GEMM is bound by
    each consumer's wait for its wgmma and its promotion, not by L2: docs/kernel_rounds.md,
    round 51) spans two weight scale blocks, so it keeps two 128-wide accumulators, promoted
    one after the other to keep a single partial tile live (232 registers hold no more). Where
    an expert's last tile holds no rows of this consumer's half it only passes the stages on
    (0.93-0.95x the time at 288 rows an expert, E128; the test outside the K loop, as inside it
    cost up to 4% at EP8: docs/kernel_rounds.md, round 41). HAS_PROBS: each row's router prob
    multiplies its accumulators before they are stored."""
    _, _, c_desc = args[0]
    a_bufs, b_bufs, c_bufs = args[1]
    ready, empty = args[2]
    tables = args[3]
    _, _, y_ptr, p_ptr = args[4]
    num_experts, N, K, n_blocks, num_tiles, _ = args[5]
    _, _, _, stride_ym = args[6]
    sa_bufs, sb_bufs = args[7]
    STAGES: gl.constexpr = b_bufs.type.shape[0]
    HALF: gl.constexpr = a_bufs.type.shape[1]
    BLOCK_N: gl.constexpr = b_bufs.type.shape[1]
    BLOCK_K: gl.constexpr = b_bufs.type.shape[2]
    SUB_N: gl.constexpr = BLOCK_K if BLOCK_N > BLOCK_K else BLOCK_N  # one weight block wide
    TWO: gl.constexpr = BLOCK_N > SUB_N  # two weight blocks: two accumulators, one at a time
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, SUB_N, 32])
    lanes = gl.arange(0, HALF, layout=gl.SliceLayout(1, acc_layout))
    col_lanes = gl.arange(0, SUB_N, layout=gl.SliceLayout(0, acc_layout))
    pair_layout: gl.constexpr = gl.BlockedLayout([2], [32], [4], [0])
    pair = gl.arange(0, 2, layout=pair_layout)
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts, 2 * HALF, 4)
        steps = gl.where(row_start < row_end, gl.cdiv(K, BLOCK_K), 0)
        n0 = nb * BLOCK_N
        rows = row_start + HALF_INDEX * HALF + lanes
        row_mask = rows < row_end
        first = row_start + HALF_INDEX * HALF
        acc = gl.zeros([HALF, SUB_N], gl.float32, acc_layout)
        acc_hi = gl.zeros([HALF, SUB_N], gl.float32, acc_layout)
        if first < row_end:
            for kb in range(steps):
                s = it % STAGES
                mbarrier.wait(ready.index(s), (it // STAGES) & 1)
                sa = sa_bufs.index(s).slice(HALF_INDEX * HALF, HALF).load(lanes.type.layout)
                sb_pair = sb_bufs.index(s).load(pair_layout)
                sb = gl.sum(gl.where(pair == 0, sb_pair, 0.0), 0)
                sb_hi = gl.sum(gl.where(pair == 1, sb_pair, 0.0), 0)
                a = a_bufs.index(2 * s + HALF_INDEX)
                b = b_bufs.index(s)
                if TWO:
                    acc = _partial(a, b.slice(0, SUB_N).permute((1, 0)), acc, sa * sb)
                    acc_hi = _partial(a, b.slice(SUB_N, SUB_N).permute((1, 0)), acc_hi,
                                      sa * sb_hi)
                else:
                    acc = _partial(a, b.permute((1, 0)), acc, sa * sb)
                mbarrier.arrive(empty.index(s), count=1)
                it += 1
        else:  # the tile's rows end before this consumer's: release its stages unread
            for kb in range(steps):
                s = it % STAGES
                mbarrier.wait(ready.index(s), (it // STAGES) & 1)
                mbarrier.arrive(empty.index(s), count=1)
                it += 1
        if HAS_PROBS:
            prob = gl.expand_dims(gl.load(p_ptr + rows, mask=row_mask, other=0.0), 1)
            acc = acc * prob
            if TWO:
                acc_hi = acc_hi * prob
        if first + HALF <= row_end:  # all rows this expert's: TMA stores, overlapping the next
            tma.store_wait(0)        # tile's MMAs (the staging tiles of the last are read)
            _stage_store(c_desc, c_bufs.index(2 * HALF_INDEX), acc, first, n0)
            if TWO:
                _stage_store(c_desc, c_bufs.index(2 * HALF_INDEX + 1), acc_hi, first, n0 + SUB_N)
        elif first < row_end:  # the expert's last rows: the tile's others are the next expert's
            _store(y_ptr, acc, rows, row_mask, n0 + col_lanes, N, stride_ym)
            if TWO:
                _store(y_ptr, acc_hi, rows, row_mask, n0 + SUB_N + col_lanes, N, stride_ym)
    tma.store_wait(0)


@gluon.jit
def _consume_low(args, HAS_PROBS: gl.constexpr):
    _consume(args, 0, HAS_PROBS)


@gluon.jit
def _consume_high(args, HAS_PROBS: gl.constexpr):
    _consume(args, 1, HAS_PROBS)


@gluon.jit(do_not_specialize=["num_experts", "num_tiles", "num_rows"])
def _fp8_grouped_ws_kernel(a_desc, b_desc, c_desc, xs_ptr, ws_ptr, y_ptr, p_ptr, counts_ptr,
                           num_experts, N, K, num_tiles, num_rows, stride_xsk, stride_wse,
                           stride_wsn, stride_ym, E_PAD: gl.constexpr, STAGES: gl.constexpr,
                           HAS_PROBS: gl.constexpr, num_warps: gl.constexpr):
    HALF: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    BLOCK_N: gl.constexpr = b_desc.block_type.shape[0]
    tables = expert_tables(counts_ptr, num_experts, num_rows, 2 * HALF, E_PAD, num_warps)
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [2 * STAGES, HALF, BLOCK_K], a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES, BLOCK_N, BLOCK_K], b_desc.layout)
    # staging tiles of the TMA epilogue: two consumers x two 128-wide accumulators
    c_bufs = gl.allocate_shared_memory(c_desc.dtype, [4] + c_desc.block_type.shape,
                                       c_desc.layout)
    scale_layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    sa_bufs = gl.allocate_shared_memory(gl.float32, [STAGES, 2 * HALF], scale_layout)
    sb_bufs = gl.allocate_shared_memory(gl.float32, [STAGES, 2], scale_layout)
    ready = mbarriers(STAGES, 1)
    empty = mbarriers(STAGES, 2)  # both consumers release a stage

    # the partitions' arguments (worker partitions share one signature), grouped by kind
    args = ((a_desc, b_desc, c_desc), (a_bufs, b_bufs, c_bufs), (ready, empty), tables,
            (xs_ptr, ws_ptr, y_ptr, p_ptr),
            (num_experts, N, K, gl.cdiv(N, BLOCK_N), num_tiles, num_rows),
            (stride_xsk, stride_wse, stride_wsn, stride_ym), (sa_bufs, sb_bufs))
    # registers per thread: 216 per consumer, 72 for the loader (its tile lookups); the
    # default partition gets the rest of 3 x 168 (maxnreg): 216. 232/40 spilled (ptxas -v).
    gl.warp_specialize([(_consume_low, (args, HAS_PROBS)), (_consume_high, (args, HAS_PROBS)),
                        (_load_partition, (args, ))], [4, 1], [216, 72])


#: the measured crossover (H100, docs/kernel_rounds.md, round 9): from 2048 rows (256 tokens at
#: top-8) and 32 rows per expert on average the Gluon kernel is 1.05-1.36x fp8_gemm's Triton
#: kernel; at 1024 rows they tie (0.93-1.11x). Round 6's 8192 predates the scales in the ring.
MIN_ROWS = 2048
MIN_ROWS_PER_EXPERT = 32


_LAUNCH = CachedLaunch(_fp8_grouped_ws_kernel)


def applies(xq: torch.Tensor, qweight, rows: int = None) -> bool:
    """Hopper, K rows TMA can stride (16-byte aligned), and a batch over the crossover: xq's
    rows, or `rows` where xq is padded past the rows routing fills (checks.tile_rows)."""
    rows = xq.shape[0] if rows is None else rows
    return (xq.is_cuda and is_hopper(xq.device)
            and qweight.in_features % 16 == 0 and qweight.scale.stride(-1) == 1
            and rows >= MIN_ROWS and rows >= MIN_ROWS_PER_EXPERT * qweight.data.shape[0])


def default_tiles(rows: int) -> tuple:
    """(block_n, stages): 256-wide tiles with 3 stages from 16384 rows (1.06-1.24x the 128-wide
    at EP8, a tie at E128), 128-wide with 4 below (up to 1.09x: more tiles to spread)."""
    return (256, 3) if rows >= 16384 else (128, 4)


def fp8_grouped_ws(xq: torch.Tensor, xs: torch.Tensor, qweight, counts: torch.Tensor,
                   tiles: tuple = None, probs: torch.Tensor = None) -> torch.Tensor:
    """Quantized rows xq [T, in] (e4m3) sorted by expert, their scales xs [T, in/128] stored
    K-block-major (fp8_quantize_activation's layout), FP8Block [E, out, in] -> bf16 [T, out];
    probs [T]: each row's router prob, multiplied into its fp32 accumulators."""
    wq, ws = qweight.data, qweight.scale
    num_experts, n, k = wq.shape
    rows = xq.shape[0]
    block_n, stages = tiles or default_tiles(rows)
    y = torch.empty(rows, n, device=xq.device, dtype=torch.bfloat16)
    if rows == 0:
        return y
    if xs.stride(0) != 1:
        raise ValueError("xs: activation scales must be K-block-major (stride 1 along rows), "
                         "as fp8_quantize_activation returns them")
    a_layout = gl.NVMMASharedLayout.get_default_for([ROWS_PER_CONSUMER, BLOCK], gl.float8e4nv)
    b_layout = gl.NVMMASharedLayout.get_default_for([block_n, BLOCK], gl.float8e4nv)
    a_desc = TensorDescriptor.from_tensor(xq, [ROWS_PER_CONSUMER, BLOCK], a_layout)
    b_desc = TensorDescriptor.from_tensor(wq.reshape(num_experts * n, k), [block_n, BLOCK],
                                          b_layout)
    sub_n = min(block_n, BLOCK)
    c_desc = TensorDescriptor.from_tensor(
        y, [ROWS_PER_CONSUMER, sub_n],
        gl.NVMMASharedLayout.get_default_for([ROWS_PER_CONSUMER, sub_n], gl.bfloat16))
    num_tiles = triton.cdiv(n, block_n) * tile_bound(rows, num_experts, BLOCK_M)
    _LAUNCH(
        (min(num_tiles, sm_count(xq.device)), ), a_desc, b_desc, c_desc, xs, ws, y,
        y if probs is None else probs.contiguous(), counts, num_experts, n, k, num_tiles, rows,
        xs.stride(1), ws.stride(0), ws.stride(1), y.stride(0), E_PAD=table_size(num_experts),
        STAGES=stages, HAS_PROBS=probs is not None, num_warps=4,
        maxnreg=168)  # 3 warpgroups x 168 = the SM's 64K registers
    return y
