"""Warp-specialized W4A16 grouped GEMM for Hopper (Gluon): the training-size MoE path.

At hundreds of rows per expert the GEMM is compute-bound, and the decode kernel's shape (the
unpack into a wgmma's A registers, one warpgroup doing both) serializes the CUDA cores and the
tensor core. Here the two are different warps, over three rings in shared memory: one loader
warp brings the lane-order codes (w4a16_lanes) and the group scales of each 128-input block
(TMA and cp.async), another the x rows (TMA); a dequantizing warpgroup, a weight row a thread,
turns the codes into the engine's bf16 operand (the same three instructions a pair as
w4a16_gluon: an AND-OR to bf16 128 + n, minus 136, times the scale: one rounding,
numerics.int4_pair_operand) and stores it in the wgmma's swizzled layout; two consumer
warpgroups, 128 token rows each, run wgmmas with both operands from shared memory. A code word
of lane order holds adjacent input pairs, so a thread loads and stores whole 16-byte runs
without a byte permute or a bank conflict. The grid is persistent: the loaders and the
dequantizer run ahead into the next tile while the consumers finish and store this one.

The backward's grad_input (grad_out @ W, GRAD_INPUT) runs the same partitions: its output
columns are a scale group's 128 inputs and its steps blocks of 128 weight rows, so the code
stages hold the same boxes at swapped coordinates and the dequantizer is unchanged; the
consumers read the operand stage untransposed (B MN-major, one n = 128 wgmma over both halves).
It replaces dequantize + torch._grouped_mm, whose bf16 copy of every expert's weight cost as
much as the GEMM at few rows per expert (round 38).

The numbers are those of every W4A16 kernel here: the dequantized weight (bit for bit the
reference's) times bf16 x with fp32 accumulation; only the summation order differs.

Gluon has no interpreter, so CI compiles this kernel for sm_90 offline and runs on a Hopper GPU
check it against the reference (tests/kernels/test_w4a16_grouped_ws.py; rounds 36-38 ran on an
H200, docs/kernel_rounds.md).
"""
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, \
    warpgroup_mma, warpgroup_mma_wait

from . import numerics
from .expert_tiles import tile_bound
from .gluon_hopper import cp_async_load, cta_barrier, expert_tables, mbarriers, sm_count, \
    table_size, tile_of, tma_load
from .launch_cache import CachedLaunch
from .w4a16_gluon import BLOCK_K, GROUP, HALF_K, WORDS, _weight_descriptor, _x_half, \
    int4_pairs_operand, x_descriptor
from .w4a16_gluon import applies as gluon_applies

#: token rows a tile: two consumer warpgroups of 128 (2 x m64 wgmmas each); 128-row tiles, whose
#: dequantized operand serves half the rows, were 1.08-1.22x slower but at W2 E128 (round 36)
BLOCK_M = 256
BLOCK_N = 128  # weight rows a tile: a row a thread of the dequantizing warpgroup
CODE_SWIZZLE = 64  # bytes: a code stage's rows of 16 words, read 16 bytes at a time


@gluon.constexpr_function
def _row_layout(warps):
    """[rows, i, j, q, t] of a stage's operand half: a thread holds one weight row's 64 inputs
    32i + 8j + 2q + t of the half, in that order: eight runs of 8 adjacent inputs."""
    return gl.BlockedLayout([1, 2, 4, 4, 2], [32, 1, 1, 1, 1], [warps, 1, 1, 1, 1],
                            [4, 3, 2, 1, 0])


@gluon.constexpr_function
def _words_layout(warps):
    """[rows, 16 lane words]: a thread holds its row's words, four 16-byte loads that the
    64-byte swizzle of the code stages (CODE_SWIZZLE) spreads over all banks."""
    return gl.BlockedLayout([1, 16], [32, 1], [warps, 1], [1, 0])


@gluon.jit
def _dequantize_half(words, scale2, layout: gl.constexpr):
    """A row's lane words [rows, i, q] of one half (word 4q + 2h + i) and its bf16x2 group scale
    [rows] -> the bf16 operand [rows, 64] of the half: pair j of word q is (nibble - 8) * scale
    of inputs 32i + 8j + 2q and +1."""
    ROWS: gl.constexpr = words.shape[0]
    j_layout: gl.constexpr = gl.SliceLayout(
        0, gl.SliceLayout(1, gl.SliceLayout(3, gl.SliceLayout(4, layout))))
    shift = gl.arange(0, 4, j_layout) * 4
    shift = gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(shift, 0), 1), 3), 4)
    words = gl.convert_layout(words, gl.SliceLayout(2, gl.SliceLayout(4, layout)))
    pairs = gl.expand_dims(gl.expand_dims(words, 2), 4) >> shift  # [rows, i, j, q, 1]
    pairs = pairs + gl.full([ROWS, 2, 4, 4, 2], 0, gl.int32, layout)  # free broadcast over t
    scale2 = gl.convert_layout(scale2, gl.SliceLayout(
        1, gl.SliceLayout(2, gl.SliceLayout(3, gl.SliceLayout(4, layout)))))
    scale2 = gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(
        scale2, 1), 2), 3), 4)
    pairs, scale2 = gl.broadcast(pairs, scale2)
    return gl.reshape(int4_pairs_operand(pairs, scale2), [ROWS, HALF_K])


@gluon.jit
def _tile_steps(args, tile, WARPS: gl.constexpr):
    """(expert, first row, row end, output block, steps) of a tile (tile_of), for every
    partition alike: no steps for a tile past the last."""
    x_desc, _ = args[0]
    tables = args[3]
    num_experts, N, steps, n_blocks, num_tiles, _ = args[5]
    expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts,
                                             2 * x_desc.block_type.shape[1], WARPS)
    return expert, row_start, row_end, nb, gl.where(row_start < row_end, steps, 0)


@gluon.jit
def _code_block(nb, kb, GRAD_INPUT: gl.constexpr):
    """(weight row block, scale group) of a tile's step: the forward's output columns are
    weight rows and its steps groups of inputs; grad_input's output columns are a group's
    inputs and its steps blocks of weight rows."""
    if GRAD_INPUT:
        return kb, nb
    else:
        return nb, kb


@gluon.jit
def _operand_half(b_bufs, b, h: gl.constexpr, GRAD_INPUT: gl.constexpr):
    """[BLOCK_N, 64] half h of operand stage b: the forward's halves are stages of their own
    (wgmma B K-major), grad_input's the 64-column chunks of a [BLOCK_N, 128] stage (B
    MN-major, one n = 128 wgmma over both)."""
    if GRAD_INPUT:
        return b_bufs.index(b).slice(h * HALF_K, HALF_K, dim=1)
    else:
        return b_bufs.index(2 * b + h)


@gluon.jit
def _load_codes(args, GRAD_INPUT: gl.constexpr):
    """One warp fills each code stage: the rows' scale words by cp.async, then the codes by
    TMA, both completing the stage's ready barrier. The code ring runs ahead of the x ring,
    whose stages the consumers hold until their wgmmas retire."""
    _, w_desc = args[0]
    _, w_bufs, s_bufs, _ = args[1]
    _, _, w_ready, w_empty, _, _ = args[2]
    s_ptr = args[4][0]
    _, N, _, _, num_tiles, _ = args[5]
    stride_se, stride_sn, _ = args[6]
    W_STAGES: gl.constexpr = w_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = w_bufs.type.shape[1]
    lanes = gl.arange(0, BLOCK_N, layout=gl.BlockedLayout([BLOCK_N // 32], [32], [1], [0]))
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        expert, row_start, row_end, nb, steps = _tile_steps(args, tile, 1)
        s_words = s_ptr + expert.to(gl.int64) * stride_se
        for kb in range(steps):
            s = it % W_STAGES
            row_block, group = _code_block(nb, kb, GRAD_INPUT)
            rows = row_block * BLOCK_N + lanes
            mbarrier.wait(w_empty.index(s), ((it // W_STAGES) & 1) ^ 1)  # fresh: phase 1 done
            bar = w_ready.index(s)
            cp_async_load(s_bufs.index(s), s_words + rows * stride_sn + group // 2,
                          mask=rows < N)
            async_copy.mbarrier_arrive(bar)  # before expect's arrival: it adds its pending count
            mbarrier.expect(bar, w_desc.block_type.nbytes)
            tma_load(w_desc, [expert * N + row_block * BLOCK_N, group * WORDS], bar,
                     w_bufs.index(s))
            it += 1


@gluon.jit
def _load_x(args):
    """One warp fills each x stage by TMA: a box of each consumer's token rows, both 64-input
    halves of the step."""
    x_desc, _ = args[0]
    x_bufs, _, _, _ = args[1]
    x_ready, x_empty, _, _, _, _ = args[2]
    num_tiles = args[5][4]
    X_STAGES: gl.constexpr = x_bufs.type.shape[0] // 2
    CONSUMER_ROWS: gl.constexpr = x_desc.block_type.shape[1]
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        expert, row_start, row_end, nb, steps = _tile_steps(args, tile, 1)
        for kb in range(steps):
            s = it % X_STAGES
            mbarrier.wait(x_empty.index(s), ((it // X_STAGES) & 1) ^ 1)
            bar = x_ready.index(s)
            mbarrier.expect(bar, 2 * x_desc.block_type.nbytes)
            k_half = kb * (BLOCK_K // HALF_K)
            tma_load(x_desc, [k_half, row_start, 0], bar, x_bufs.index(2 * s))
            tma_load(x_desc, [k_half, row_start + CONSUMER_ROWS, 0], bar,
                     x_bufs.index(2 * s + 1))
            it += 1


@gluon.jit
def _dequant_partition(args, GRAD_INPUT: gl.constexpr):
    """One warpgroup, a weight row a thread: each code stage's words and scale into registers,
    then the bf16 operand of both 64-input halves of the stage's group, stored whole rows at a
    time into an operand stage the consumers read by wgmma."""
    _, w_bufs, s_bufs, b_bufs = args[1]
    _, _, w_ready, w_empty, full, free = args[2]
    num_tiles = args[5][4]
    W_STAGES: gl.constexpr = w_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = w_bufs.type.shape[1]
    B_STAGES: gl.constexpr = b_bufs.type.shape[0] // (1 if GRAD_INPUT else 2)
    layout: gl.constexpr = _row_layout(4)
    words_layout: gl.constexpr = _words_layout(4)
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        expert, row_start, row_end, nb, steps = _tile_steps(args, tile, 4)
        for kb in range(steps):
            s = it % W_STAGES
            b = it % B_STAGES
            mbarrier.wait(w_ready.index(s), (it // W_STAGES) & 1)
            words = w_bufs.index(s).load(words_layout)
            group = _code_block(nb, kb, GRAD_INPUT)[1]
            bits = (s_bufs.index(s).load(gl.SliceLayout(1, words_layout))
                    >> ((group % 2) * 16)) & 0xFFFF
            # lane word 4q + 2h + i -> [rows, i, q] of half h: register moves only
            low, high = gl.split(gl.permute(gl.reshape(words, [BLOCK_N, 4, 2, 2]),
                                            (0, 3, 1, 2)))
            mbarrier.wait(free.index(b), ((it // B_STAGES) & 1) ^ 1)  # fresh: phase 1 done
            _operand_half(b_bufs, b, 0, GRAD_INPUT).store(
                _dequantize_half(low, bits | (bits << 16), layout))
            _operand_half(b_bufs, b, 1, GRAD_INPUT).store(
                _dequantize_half(high, bits | (bits << 16), layout))
            fence_async_shared()  # every warp's stores visible to the wgmmas, then one arrive
            cta_barrier()
            # the code stage is freed once its words are used, not once their loads are
            # issued: freed right after the loads, a refill by TMA overtook them (round 37)
            mbarrier.arrive(w_empty.index(s), count=1)
            mbarrier.arrive(full.index(b), count=1)
            it += 1


@gluon.jit
def _consume_tile(args, first_row, row_end, nb, steps, it, lanes, cols,
                  GRAD_INPUT: gl.constexpr, HALF_INDEX: gl.constexpr, HAS_PROBS: gl.constexpr):
    """The first len(lanes) of this consumer's rows of a tile times its operand over the tile's
    steps (no wgmma where its rows are past the tile's), stored to its columns nb * len(cols) +
    cols, with HAS_PROBS each row's rounded output times its router prob (numerics.scaled);
    returns the ring count after it."""
    x_bufs, _, _, b_bufs = args[1]
    x_ready, x_empty, _, _, full, free = args[2]
    X_STAGES: gl.constexpr = x_bufs.type.shape[0] // 2
    B_STAGES: gl.constexpr = b_bufs.type.shape[0] // (1 if GRAD_INPUT else 2)
    ROWS: gl.constexpr = lanes.shape[0]
    TILE_COLS: gl.constexpr = cols.shape[0]
    acc = gl.zeros([ROWS, TILE_COLS], gl.float32, _acc_layout(TILE_COLS))
    for kb in range(steps):
        s = it % X_STAGES
        b = it % B_STAGES
        mbarrier.wait(x_ready.index(s), (it // X_STAGES) & 1)
        mbarrier.wait(full.index(b), (it // B_STAGES) & 1)
        if first_row < row_end:
            for h in gl.static_range(2):
                if GRAD_INPUT:  # x's half h: weight rows 64h.. of the step's block
                    w = b_bufs.index(b).slice(h * HALF_K, HALF_K)
                else:
                    w = b_bufs.index(2 * b + h).permute((1, 0))
                x = _x_half(x_bufs, 2 * s + HALF_INDEX, h).slice(0, ROWS)
                acc = warpgroup_mma(x, w, acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
        mbarrier.arrive(x_empty.index(s), count=1)
        mbarrier.arrive(free.index(b), count=1)
        it += 1
    _, y_ptr, p_ptr = args[4]
    out_cols = args[5][5]
    _, _, stride_ym = args[6]
    rows = first_row + lanes
    if HAS_PROBS:
        prob = gl.load(p_ptr + rows, mask=rows < row_end, other=0.0).to(gl.float32)
        acc = numerics.scaled(acc, gl.expand_dims(prob, 1), True, False)
    out = nb * TILE_COLS + cols
    ptrs = y_ptr + gl.expand_dims(rows.to(gl.int64) * stride_ym, 1) + gl.expand_dims(out, 0)
    mask = gl.expand_dims(rows < row_end, 1) & gl.expand_dims(out < out_cols, 0)
    gl.store(ptrs, acc.to(gl.bfloat16), mask=mask & (steps > 0))
    return it


@gluon.constexpr_function
def _acc_layout(cols):
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                     instr_shape=[16, cols, 16])


@gluon.jit
def _consume(args, GRAD_INPUT: gl.constexpr, HALF_INDEX: gl.constexpr, HAS_PROBS: gl.constexpr):
    """One warpgroup: CONSUMER_ROWS token rows of every tile of this CTA, both operands from
    shared memory; where the tile's rows end in the first m64 block of this consumer's, the
    wgmmas of that block alone, and none where they end before this consumer's (an expert's
    last tile is most often short: at 256 +- 16 rows an expert half the experts take a second
    tile of a few rows). A stage's wgmmas retire before its x and operand stages are released
    (left in flight while the next stage's were issued, round 36's kernel was 1.02-1.44x
    slower: docs/kernel_rounds.md). grad_input reads its [BLOCK_N, 128] operand stage
    untransposed: the 64 weight rows of each x half by all 128 inputs of the tile."""
    x_bufs, _, _, b_bufs = args[1]
    num_tiles = args[5][4]
    CONSUMER_ROWS: gl.constexpr = x_bufs.type.shape[2]
    M64: gl.constexpr = CONSUMER_ROWS // 2  # a warpgroup's wgmma rows
    TILE_COLS: gl.constexpr = b_bufs.type.shape[1]  # weight rows, or a group's inputs
    # the epilogue's indices, made once: W2's tiles of six steps pay for every instruction there
    acc_layout: gl.constexpr = _acc_layout(TILE_COLS)
    lanes = gl.arange(0, CONSUMER_ROWS, layout=gl.SliceLayout(1, acc_layout))
    lanes_m64 = gl.arange(0, M64, layout=gl.SliceLayout(1, acc_layout))
    cols = gl.arange(0, TILE_COLS, layout=gl.SliceLayout(0, acc_layout))
    it = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        expert, row_start, row_end, nb, steps = _tile_steps(args, tile, 4)
        first_row = row_start + HALF_INDEX * CONSUMER_ROWS
        if first_row + M64 < row_end:
            it = _consume_tile(args, first_row, row_end, nb, steps, it, lanes, cols, GRAD_INPUT,
                               HALF_INDEX, HAS_PROBS)
        else:
            it = _consume_tile(args, first_row, row_end, nb, steps, it, lanes_m64, cols,
                               GRAD_INPUT, HALF_INDEX, HAS_PROBS)


@gluon.jit
def _consume_low(args, GRAD_INPUT: gl.constexpr, HAS_PROBS: gl.constexpr):
    _consume(args, GRAD_INPUT, 0, HAS_PROBS)


@gluon.jit
def _consume_high(args, GRAD_INPUT: gl.constexpr, HAS_PROBS: gl.constexpr):
    _consume(args, GRAD_INPUT, 1, HAS_PROBS)


@gluon.jit(do_not_specialize=["num_experts", "num_tiles"])
def _w4a16_grouped_ws_kernel(x_desc, w_desc, s_ptr, y_ptr, p_ptr, counts_ptr, num_experts, N,
                             K, num_tiles, stride_se, stride_sn, stride_ym, E_PAD: gl.constexpr,
                             X_STAGES: gl.constexpr, W_STAGES: gl.constexpr,
                             B_STAGES: gl.constexpr, GRAD_INPUT: gl.constexpr,
                             HAS_PROBS: gl.constexpr, num_warps: gl.constexpr):
    """N: the weight's rows; K: its inputs, whole 128-input groups. y = x @ W^T [T, N] (with
    HAS_PROBS each row's rounded output times its router prob p_ptr[row]), or with
    GRAD_INPUT y = x @ W [T, K] for x [T, N] (the backward's grad_input). Three rings: x stages
    (a box of [2 halves, CONSUMER_ROWS, 64] for each consumer), code stages (the codes
    [BLOCK_N, 16 words] and the rows' scale words of one group) and operand stages (the
    dequantized bf16 of the group's two 64-input halves: two [BLOCK_N, 64] stages, or with
    GRAD_INPUT one [BLOCK_N, 128])."""
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = 2 * x_desc.block_type.shape[1]
    tables = expert_tables(counts_ptr, num_experts, x_desc.shape[1], BLOCK_M, E_PAD, num_warps)
    x_bufs = gl.allocate_shared_memory(gl.bfloat16, [2 * X_STAGES] + x_desc.block_type.shape,
                                       x_desc.layout)
    w_bufs = gl.allocate_shared_memory(gl.int32, [W_STAGES, BLOCK_N, WORDS], w_desc.layout)
    s_bufs = gl.allocate_shared_memory(gl.int32, [W_STAGES, BLOCK_N],
                                       gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    if GRAD_INPUT:
        b_bufs = gl.allocate_shared_memory(
            gl.bfloat16, [B_STAGES, BLOCK_N, 2 * HALF_K],
            gl.NVMMASharedLayout.get_default_for([BLOCK_N, 2 * HALF_K], gl.bfloat16))
    else:
        b_bufs = gl.allocate_shared_memory(
            gl.bfloat16, [2 * B_STAGES, BLOCK_N, HALF_K],
            gl.NVMMASharedLayout.get_default_for([BLOCK_N, HALF_K], gl.bfloat16))
    x_ready = mbarriers(X_STAGES, 1)
    x_empty = mbarriers(X_STAGES, 2)  # both consumers
    w_ready = mbarriers(W_STAGES, 1)
    w_empty = mbarriers(W_STAGES, 1)  # the dequantizer
    full = mbarriers(B_STAGES, 1)
    free = mbarriers(B_STAGES, 2)  # both consumers
    if GRAD_INPUT:  # tiles of a group's inputs, steps of BLOCK_N weight rows
        shape = (num_experts, N, N // BLOCK_N, K // BLOCK_K, num_tiles, K)
    else:  # tiles of BLOCK_N weight rows, steps of a group
        shape = (num_experts, N, K // BLOCK_K, gl.cdiv(N, BLOCK_N), num_tiles, N)
    # the partitions' arguments (worker partitions share one signature), grouped by kind
    args = ((x_desc, w_desc), (x_bufs, w_bufs, s_bufs, b_bufs),
            (x_ready, x_empty, w_ready, w_empty, full, free),
            tables, (s_ptr, y_ptr, p_ptr), shape, (stride_se, stride_sn, stride_ym))
    # registers per thread, of 4 warpgroups x maxnreg 128 (the loaders' warps share one):
    # 184 for the worker consumer, 104 for the dequantizer, 40 for the loaders, and the
    # default consumer the rest (184): a consumer's 128 x 128 fp32 accumulator takes 128
    # the constexprs are passed on their own: inside a tuple they would arrive as tensors
    gl.warp_specialize([(_consume_low, (args, GRAD_INPUT, HAS_PROBS)),
                        (_consume_high, (args, GRAD_INPUT, HAS_PROBS)),
                        (_dequant_partition, (args, GRAD_INPUT)),
                        (_load_codes, (args, GRAD_INPUT)), (_load_x, (args, ))],
                       [4, 4, 1, 1], [184, 104, 40, 40])


_LAUNCH = CachedLaunch(_w4a16_grouped_ws_kernel)


def applies(x: torch.Tensor, qweight) -> bool:
    """What the decode kernel asks of its tensors (w4a16_gluon.applies), for a grouped weight."""
    return qweight.data.dim() == 3 and gluon_applies(x, qweight)


def applies_grad_input(grad_out: torch.Tensor, qweight) -> bool:
    """applies, and the weight's rows in whole BLOCK_N steps: a step past them would add the
    next expert's rows into the sum."""
    return applies(grad_out, qweight) and qweight.data.shape[1] % BLOCK_N == 0


def w4a16_grouped_ws(x: torch.Tensor, qweight, counts: torch.Tensor, x_stages: int = 2,
                     w_stages: int = 2, b_stages: int = 2,
                     probs: torch.Tensor = None) -> torch.Tensor:
    """Rows of x [T, in] bf16 sorted by expert, int32 counts [E] on x's device, W4A16
    QuantizedWeight [E, out, in] -> bf16 [T, out]. Tiles of BLOCK_M token rows x BLOCK_N
    weight rows; x_stages, w_stages of codes and scales, b_stages of the dequantized operand
    (the defaults fill 214 KB of shared memory; a third x stage does not fit, one was 1.3-1.6x
    slower: round 37). Reads the codes in lane order (made once per
    weight, w4a16_lanes). probs [T]: each row's router prob, multiplying its rounded output."""
    return _launch(x, qweight, counts, False, (x_stages, w_stages, b_stages), probs)


def w4a16_grouped_ws_grad_input(grad_out: torch.Tensor, qweight, counts: torch.Tensor,
                                x_stages: int = 2, w_stages: int = 2,
                                b_stages: int = 2) -> torch.Tensor:
    """The backward's grad_input through the same operand: grad_out [T, out] bf16 sorted by
    expert -> bf16 [T, in] = grad_out_e @ dequant(W_e), without the [E, out, in] bf16 copy that
    dequantize + torch._grouped_mm writes and reads (applies_grad_input)."""
    return _launch(grad_out, qweight, counts, True, (x_stages, w_stages, b_stages))


def _launch(x: torch.Tensor, qweight, counts: torch.Tensor, grad_input: bool,
            rings: tuple, probs: torch.Tensor = None) -> torch.Tensor:
    num_experts, n, k = qweight.data.shape[0], qweight.data.shape[1], qweight.in_features
    rows = x.shape[0]
    y = torch.empty(rows, k if grad_input else n, device=x.device, dtype=torch.bfloat16)
    if rows == 0:
        return y
    w_desc = _weight_descriptor(qweight, BLOCK_N, 1, CODE_SWIZZLE)
    x_desc = x_descriptor(x, BLOCK_M // 2, 1)
    words = qweight.scale.view(torch.int32)  # group pairs (applies: scale_words_fit)
    col_tiles = k // GROUP if grad_input else triton.cdiv(n, BLOCK_N)
    num_tiles = col_tiles * tile_bound(rows, num_experts, BLOCK_M)
    x_stages, w_stages, b_stages = rings
    _LAUNCH(
        (min(num_tiles, sm_count(x.device)), ), x_desc, w_desc, words, y,
        y if probs is None else probs.contiguous(), counts, num_experts, n, k, num_tiles,
        words.stride(0), words.stride(1), y.stride(0),
        E_PAD=table_size(num_experts), X_STAGES=x_stages, W_STAGES=w_stages,
        B_STAGES=b_stages, GRAD_INPUT=grad_input, HAS_PROBS=probs is not None, num_warps=4,
        maxnreg=128)
    return y
