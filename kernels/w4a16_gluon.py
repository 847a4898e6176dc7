"""W4A16 grouped GEMM for Hopper in Gluon: the int4 weights unpack straight into the A registers
of an asynchronous wgmma, so the unpack of one half K block runs while the tensor core works
on the previous one, and both operands arrive by TMA. The decode path, up to 128 tokens per
expert (w4a16_gluon_rules.gluon_tiles), and of dense calls in CUDA graphs up to 512 tokens: one
expert, K split over the grid (w4a16_gluon_rules.gluon_dense_tiles, round 34).

Swap AB, as in w4a16_gemm: weight rows are the MMA's M side, tokens its N side. The A registers
of a wgmma hold pairs of neighbouring inputs (2q, 2q + 1) in lane q of each quad, for rows
lane / 4 (+8 by register, +16 and +32 by warp). The kernel reads the codes in lane order
(w4a16_lanes, kept beside the serving layout): a thread's four words of a row and K block hold
exactly its pairs, pair j of a word at bits 4j and 16 + 4j, so per A register it shifts (three
of four), an AND-OR makes the bf16 pair (128 + n0, 128 + n1), then a bf16x2 subtraction of 136
(exact) and a bf16x2 multiplication by the group scale (one rounding: the engine's operand bit
for bit, as numerics.int4_pair_operand). From the serving layout every thread read all of its
rows' words and picked its byte with a byte permute: 4x the shared-memory reads and 1.25x the
unpack instructions (round 11: 1.07-1.16x slower at decode sizes). x needs no reorder, so it
comes by TMA straight into the wgmma's swizzled layout (the Triton kernel splits it into K
planes in registers instead), or, where a tile holds a token or a few (X_ASYNC), by cp.async
of those rows alone.

One warpgroup per CTA, a ring of stages holding per 128-input K block (one scale group) the
rows' scale words, the weight words and the two 64-input x halves. A program does one tile,
or in a persistent grid walks several with its ring running on across them (round 12: W2 at
E128 and the few-row grids of decode). Tiles of 8 tokens (wgmma n = 8) halve the x bytes per
K block where a batch has at most a few tokens per expert. Per block: read the words;
per half block: unpack, issue the wgmma, retire the previous half's; after the first half the
previous block's stage is refilled (with stages of several groups, whose wgmmas retire within
them, before the block's wait instead: gluon_refill_first, round 20). For MoE fc1
the SwiGLU can run in the epilogue, as in w4a16_gemm: a program then unpacks and issues the
gate and the up rows of its columns together; for fc2 the epilogue multiplies each row's
rounded output by its router prob (Marlin's order).
Decode calls are launched with programmatic dependent launch: the launch overlaps the previous
kernel's drain, and the CTAs wait for that kernel before their first read (round 15). At EP8
and in TP2's few-row grids a program also lets the next kernel in once it has issued its last
load, so that kernel's CTAs come in over this one's drain (gluon_release, rounds
19 and 22), and W13's programs at EP8 ask for their first words before they wait: the weights
are no kernel's output (gluon_early_words).
W13 at EP8 near 64 rows per expert, and from 13 to 24, an expert's last row tile may take a
tail of up to 16 rows past the token tile, multiplied by a narrow wgmma on the same unpacked A
registers: an expert a few rows over the tile no longer costs a second tile that unpacks its
weights again (rounds 16 and 20, gluon_tail). Tiles with a tail and without run
separate copies of the K loop, so the plain one keeps the plain kernel's code.
A stage may hold 2 or 4 scale groups (gluon_groups): its words come as one box, x
as one box of all its 64-input halves ([halves, rows, 64] of x viewed 3-D), the scales as one
word per group pair. Each barrier wait, refill and copy issue (Triton puts a CTA barrier before
every one) then serves 256 or 512 inputs, where at few tokens per expert they had filled the
issue slots beside the unpack (round 17).
Tried on the H100 and dropped (docs/kernel_rounds.md, rounds 8, 10, 20 and 21): a separate,
deeper ring for the words, or one running ahead of x; two consumer warpgroups sharing x, with
or without a loader warp; warp specialization with a TMA warp (as fast at EP8, slower at
E128); two half blocks in flight.

Gluon has no interpreter: CI compiles this kernel for sm_90 offline; the H100 runs check it
against the reference.
"""
import functools

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, warpgroup_mma, \
    warpgroup_mma_wait
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from .checks import scale_words_fit
from .expert_tiles import tile_bound
from .split_k import gluon_split_sum, split_buffers
from .gluon_hopper import allow_next_grid, cp_async_load, cta_barrier, expert_tables, is_hopper, \
    row_tile_count, sm_count, table_size, tile_of, tma_load, wait_for_previous_grid, warp_uniform
from .launch_cache import CachedLaunch
from .w4a16_lanes import lane_codes
from . import numerics

GROUP, HALF, STAGE_WORDS = 128, 64, 16
BLOCK_K = gl.constexpr(GROUP)  # inputs per stage: one scale group
HALF_K = gl.constexpr(HALF)  # inputs per wgmma: 128 bytes of bf16, the widest TMA swizzle
WORDS = gl.constexpr(STAGE_WORDS)  # int32 words of 8 nibbles per stage


@functools.lru_cache(maxsize=None)
def _layouts(block_n: int, block_m: int) -> tuple:
    """(accumulator, [block_n, WORDS] stage words, [block_n, 2, 4, 4, 2] operand) layouts.
    The last is the wgmma A operand's (inputs: pair t by register, 2q by lane q, +8 and up by
    register; rows: lane / 4, +8 by register, +16 and +32 by warp, +64 by register) with input
    v = 8 * (4i + j) + 2q + t of a half split into (i, j, q, t): lane q's lane-order words
    (w4a16_lanes) broadcast to their pairs j and t without data movement. The words' layout
    gives each thread its four words of each of its rows (one 16-byte load)."""
    acc = _acc_layout(block_m)
    row_regs = [2**i for i in range(6, block_n.bit_length() - 1)]  # +64 by register
    warp_rows = [[16, 0], [32, 0]]
    words = gl.DistributedLinearLayout(
        reg_bases=[[0, 1], [0, 2], [8, 0]] + [[r, 0] for r in row_regs],
        lane_bases=[[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], warp_bases=warp_rows,
        block_bases=[], shape=[block_n, STAGE_WORDS])
    operand = gl.DistributedLinearLayout(
        reg_bases=[[0, 0, 0, 0, 1], [8, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 2, 0, 0],
                   [0, 1, 0, 0, 0]] + [[r, 0, 0, 0, 0] for r in row_regs],
        lane_bases=[[0, 0, 0, 1, 0], [0, 0, 0, 2, 0], [1, 0, 0, 0, 0], [2, 0, 0, 0, 0],
                    [4, 0, 0, 0, 0]],
        warp_bases=[[r, 0, 0, 0, 0] for r, _ in warp_rows], block_bases=[],
        shape=[block_n, 2, 4, 4, 2])
    return acc, words, operand


@functools.lru_cache(maxsize=None)
def _acc_layout(block_m: int):
    """The wgmma accumulator's layout for block_m token rows (its n)."""
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                     instr_shape=[16, block_m, 16])


@gluon.jit
def _halves(words):
    """A stage's lane-order words [BLOCK_N, WORDS] (word 4q + 2h + i) -> the words of half 0 and
    of half 1, each [BLOCK_N, 2 (i), 4 (q)]: register moves only."""
    BLOCK_N: gl.constexpr = words.shape[0]
    return gl.split(gl.permute(gl.reshape(words, [BLOCK_N, 4, 2, 2]), (0, 3, 1, 2)))


@gluon.jit
def _unpack(words, scale2, a_layout: gl.constexpr, split_layout: gl.constexpr):
    """Half a block's words [BLOCK_N, 2 (i), 4 (q)] and the rows' group scales as bf16x2 words
    [BLOCK_N] -> the bf16 A operand [BLOCK_N, HALF_K]: pair j of word (i, q) is
    (nibble - 8) * scale of inputs 8 * (4i + j) + 2q and +1."""
    BLOCK_N: gl.constexpr = words.shape[0]
    words = gl.convert_layout(words, gl.SliceLayout(2, gl.SliceLayout(4, split_layout)))
    pair_layout: gl.constexpr = gl.SliceLayout(
        0, gl.SliceLayout(1, gl.SliceLayout(3, gl.SliceLayout(4, split_layout))))
    shift = gl.arange(0, 4, pair_layout) * 4
    shift = gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(shift, 0), 1), 3), 4)
    whole = gl.full([BLOCK_N, 2, 4, 4, 2], 0, gl.int32, split_layout)  # free broadcast
    pairs = (gl.expand_dims(gl.expand_dims(words, 2), 4) + whole) >> shift
    pairs = gl.convert_layout(gl.reshape(pairs, [BLOCK_N, HALF_K]), a_layout)
    pairs, scale2 = gl.broadcast(pairs, gl.expand_dims(scale2, 1))
    return int4_pairs_operand(pairs, scale2)


@gluon.jit
def int4_pairs_operand(pairs, scale2):
    """int32 words holding a pair of codes at bits 0 and 16 (each word twice, for pack=2) and
    the group scale as bf16x2 words -> the pairs' bf16 operand: bf16 (128 + n0, 128 + n1), - 136
    (exact), * scale (one rounding: the engine's operand bit for bit, as
    numerics.int4_pair_operand)."""
    return gl.inline_asm_elementwise(
        asm="""{
        .reg .b32 t, c;
        lop3.b32 t, $1, 0x000F000F, 0x43004300, 0xEA;
        mov.b32 c, 0x43084308;
        sub.rn.bf16x2 t, t, c;
        mul.rn.bf16x2 $0, t, $3;
        }""",
        constraints="=r,r,r,r,r", args=[pairs, scale2], dtype=gl.bfloat16, is_pure=True,
        pack=2)


@gluon.jit
def _x_half(bufs, stage, i: gl.constexpr):
    """Half i of a stage's x box [halves, rows, HALF_K] as the [rows, HALF_K] tile it is: the
    128-byte swizzle goes by address, and each half starts on a whole swizzle period."""
    HALVES: gl.constexpr = bufs.shape[1]
    ROWS: gl.constexpr = bufs.shape[2]
    return bufs.index(stage).reshape([HALVES * ROWS, HALF_K]).slice(i * ROWS, ROWS)


@gluon.jit
def _issue_words(w_desc, w_bufs, bar, stage, kb, expert, n0, N, SWIGLU: gl.constexpr):
    """The weight words (gate and up with SWIGLU) of K step kb of a tile into a stage, by TMA
    completing bar."""
    parts: gl.constexpr = 2 if SWIGLU else 1
    w_row = expert * (parts * N) + n0
    col = kb * w_desc.block_type.shape[1]
    tma_load(w_desc, [w_row, col], bar, w_bufs.index(parts * stage))
    if SWIGLU:
        tma_load(w_desc, [w_row + N, col], bar, w_bufs.index(parts * stage + 1))


@gluon.jit
def _issue(descs, ring, stage, kb, expert, n0, x_row, x_end, x_ptr, stride_xm, s_ptr, N,
           stride_se, stride_sn, SWIGLU: gl.constexpr, X_ASYNC: gl.constexpr,
           TAIL_LOADS: gl.constexpr, num_warps: gl.constexpr, WITH_WORDS: gl.constexpr = True):
    """Fill a stage with K step kb of a tile (expert, first output column n0, first token row
    x_row, rows to x_end), GROUPS scale groups of inputs (the words box's width): the rows'
    scale words (a word per group pair, 4 bytes, by cp.async: cp.async copies no less) then the
    weight words and x by TMA (x by cp.async with X_ASYNC), all completing the stage's
    barrier. TAIL_LOADS: whether the tail's x rows (the TAIL after the first BLOCK_M) come
    too: 0 no, 1 yes, 2 where the tile has them (known statically in a tile's own loop, so its
    refills carry no predicate).
    Scales loaded into registers cost 7% at EP8 and E128 decode: a global load in flight
    stalls the next wgmma (docs/kernel_rounds.md, round 9). The tile comes as scalars: held as
    the pointer tensors, the next tile's cost 24 registers (round 12)."""
    w_desc, x_desc, xt_desc = descs
    w_bufs, x_bufs, xt_bufs, s_bufs, ready = ring
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[1]
    GROUPS: gl.constexpr = w_desc.block_type.shape[1] // WORDS
    PAIRS: gl.constexpr = (GROUPS + 1) // 2  # scale words a row
    k0 = kb * (GROUPS * BLOCK_K)
    bar = ready.index(stage)
    parts: gl.constexpr = 2 if SWIGLU else 1
    # s_ptr: the scales as int32 words of group pairs, [E, PARTS * N, K / 256]
    rows = n0 + gl.arange(0, BLOCK_N, layout=gl.BlockedLayout([1], [32], [num_warps], [0]))
    s_words = s_ptr + expert.to(gl.int64) * stride_se + rows * stride_sn + kb * GROUPS // 2
    for part in gl.static_range(parts):  # gate, up
        for p in gl.static_range(PAIRS):
            cp_async_load(s_bufs.index(PAIRS * (parts * stage + part) + p),
                          s_words + part * N * stride_sn + p, mask=rows < N)
    if X_ASYNC:  # only the tile's own token rows; the rest zero-filled, nothing read
        x_layout: gl.constexpr = gl.BlockedLayout([1, 4], [2, 16], [num_warps, 1], [1, 0])
        x_rows = x_row + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, x_layout))
        x_cols = k0 + gl.arange(0, HALF_K, layout=gl.SliceLayout(0, x_layout))
        # rows 16-byte aligned (applies: stride % 8), said so for 8-byte copies
        x_ptrs = (x_ptr + gl.expand_dims(x_rows.to(gl.int64) * (stride_xm // 8) * 8, 1)
                  + gl.expand_dims(x_cols, 0))
        x_mask = gl.expand_dims(x_rows < x_end, 1)
        for i in gl.static_range(2 * GROUPS):
            cp_async_load(_x_half(x_bufs, stage, i), x_ptrs + i * HALF_K, mask=x_mask)
    async_copy.mbarrier_arrive(bar)  # before expect's arrival: it adds its pending count
    x_bytes: gl.constexpr = 0 if X_ASYNC else x_desc.block_type.nbytes
    nbytes: gl.constexpr = (parts * w_desc.block_type.nbytes if WITH_WORDS else 0) + x_bytes
    tail_bytes: gl.constexpr = nbytes + xt_desc.block_type.nbytes
    with_tail = x_row + BLOCK_M < x_end
    if TAIL_LOADS == 2:
        mbarrier.expect(bar, tail_bytes, pred=with_tail)
        mbarrier.expect(bar, nbytes, pred=x_row + BLOCK_M >= x_end)
    else:
        mbarrier.expect(bar, tail_bytes if TAIL_LOADS == 1 else nbytes)
    if WITH_WORDS:
        _issue_words(w_desc, w_bufs, bar, stage, kb, expert, n0, N, SWIGLU)
    if not X_ASYNC:  # the stage's x halves in one box: [halves, rows, HALF_K]
        tma_load(x_desc, [k0 // HALF_K, x_row, 0], bar, x_bufs.index(stage))
    if TAIL_LOADS:
        tma_load(xt_desc, [k0 // HALF_K, x_row + BLOCK_M, 0], bar, xt_bufs.index(stage),
                 pred=with_tail if TAIL_LOADS == 2 else True)


@gluon.jit
def _prologue(descs, ring, first, io, STAGES: gl.constexpr, SWIGLU: gl.constexpr,
              X_ASYNC: gl.constexpr, TAIL: gl.constexpr, WITH_WORDS: gl.constexpr,
              num_warps: gl.constexpr):
    """The first STAGES - 1 stages of the program's first tile (expert, n0, rows, row end, its
    first K step); WITH_WORDS off: their words are on their way already."""
    expert, n0, row_start, row_end, kb0 = first
    x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, y_ptr, p_ptr, stride_ym = io
    for i in gl.static_range(STAGES - 1):
        _issue(descs, ring, i, kb0 + i, expert, n0, row_start, row_end, x_ptr, stride_xm, s_ptr,
               N, stride_se, stride_sn, SWIGLU, X_ASYNC, 2 if TAIL else 0, num_warps, WITH_WORDS)


@gluon.jit
def _scale_pairs(s_buf, group, layout: gl.constexpr):
    """A stage's scale words (groups 2j, 2j + 1) -> int32 words holding the group's bf16 scale
    twice (the bf16x2 operand of the unpack)."""
    bits = (s_buf.load(layout) >> ((group % 2) * 16)) & 0xFFFF
    return bits | (bits << 16)


@gluon.constexpr_function
def _keep(in_flight, groups, g, h):
    """The wgmma groups left in flight after half h of group g is issued: in_flight, but none
    after the last half of a stage of several groups."""
    return 0 if groups > 1 and 2 * g + h == 2 * groups - 1 else in_flight


@gluon.jit
def _group_words(w_buf, g: gl.constexpr, layout: gl.constexpr):
    """Group g's lane-order words [BLOCK_N, WORDS] of a stage's [BLOCK_N, GROUPS * WORDS]."""
    if w_buf.shape[1] == WORDS:
        return w_buf.load(layout)
    return w_buf.slice(g * WORDS, WORDS, dim=1).load(layout)


@gluon.jit
def _release(kb, steps, walk, STAGES: gl.constexpr, PERSISTENT: gl.constexpr):
    """Let the next kernel in at K step kb if the program's last load is issued there."""
    tile, grid, tiles = walk[0], walk[1], walk[2]
    ahead = kb + STAGES - 1
    last = not PERSISTENT or tile + grid >= tiles
    if last and (ahead == steps - 1 or (kb == 0 and steps < STAGES)):
        allow_next_grid()


@gluon.jit
def _refill(descs, ring, j, kb, steps, walk, at, io, STAGES: gl.constexpr, SWIGLU: gl.constexpr,
            PERSISTENT: gl.constexpr, X_ASYNC: gl.constexpr, TAIL: gl.constexpr,
            WITH_TAIL: gl.constexpr, RELEASE: gl.constexpr, num_warps: gl.constexpr):
    """Step j - 1 is done with its stage (every warp, after the CTA barrier): refill it with the
    step STAGES - 1 ahead, in this tile or, in a persistent grid, the next; with RELEASE let
    the next kernel in first if that is the program's last load (_release)."""
    w_desc, x_desc, xt_desc = descs
    tile, grid, tiles, tables, n_blocks, num_experts = walk
    expert, row_start, row_end, nb, kb0 = at
    x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, y_ptr, p_ptr, stride_ym = io
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[1]
    cta_barrier()
    ahead = kb + STAGES - 1
    if RELEASE:
        _release(kb, steps, walk, STAGES, PERSISTENT)
    if ahead < steps:
        _issue(descs, ring, (j + STAGES - 1) % STAGES, kb0 + ahead, expert, nb * BLOCK_N,
               row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, SWIGLU,
               X_ASYNC, 1 if WITH_TAIL else 0, num_warps)
    elif PERSISTENT:
        if tile + grid < tiles:  # the next tile's origin, found again there
            next_expert, next_start, next_end, next_nb = tile_of(
                tables, tile + grid, n_blocks, num_experts, BLOCK_M, num_warps, TAIL)
            _issue(descs, ring, (j + STAGES - 1) % STAGES, ahead - steps, next_expert,
                   next_nb * BLOCK_N, next_start, next_end, x_ptr, stride_xm, s_ptr, N,
                   stride_se, stride_sn, SWIGLU, X_ASYNC, 2 if TAIL else 0, num_warps)


@gluon.jit
def _tile(descs, ring, j, steps, walk, at, io, layouts: gl.constexpr, STAGES: gl.constexpr,
          SWIGLU: gl.constexpr, HAS_PROBS: gl.constexpr, PERSISTENT: gl.constexpr,
          X_ASYNC: gl.constexpr, TAIL: gl.constexpr, WITH_TAIL: gl.constexpr,
          RELEASE: gl.constexpr, REFILL_FIRST: gl.constexpr, STAGE_ACC: gl.constexpr,
          num_warps: gl.constexpr):
    """One tile's K loop from ring position j: its (gate and up) accumulators of the first
    BLOCK_M token rows and j after it. walk: (tile, grid, tiles, tables, n_blocks,
    num_experts), where the program is; at: the tile (tile_of); io: the kernel's pointers and
    strides. WITH_TAIL: the same A registers also multiply the next TAIL rows (a narrower
    wgmma), stored here. REFILL_FIRST: step j - 1's stage is refilled before the wait for step
    j's rather than after step j's first half (stages of several groups retire their wgmmas
    within them, _keep)."""
    w_desc, x_desc, xt_desc = descs
    w_bufs, x_bufs, xt_bufs, s_bufs, ready = ring
    tile, grid, tiles, tables, n_blocks, num_experts = walk
    expert, row_start, row_end, nb, kb0 = at
    x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, y_ptr, p_ptr, stride_ym = io
    acc_layout: gl.constexpr = layouts[0]
    tail_layout: gl.constexpr = layouts[1]
    word_layout: gl.constexpr = layouts[2]
    split_layout: gl.constexpr = layouts[3]
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[1]
    PARTS: gl.constexpr = 2 if SWIGLU else 1
    GROUPS: gl.constexpr = w_desc.block_type.shape[1] // WORDS
    PAIRS: gl.constexpr = (GROUPS + 1) // 2  # scale words a row
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=2)
    at_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=tail_layout,
                                                  k_width=2)
    row_layout: gl.constexpr = gl.SliceLayout(1, a_layout)
    acc = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
    acc_up = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
    TAIL_M: gl.constexpr = xt_desc.block_type.shape[1]  # without TAIL xt_desc is x_desc
    acc_t = gl.zeros([BLOCK_N, TAIL_M], gl.float32, tail_layout)
    acc_t_up = acc_t
    in_flight = gl.zeros([BLOCK_N, HALF_K], gl.bfloat16, a_layout)
    up_in_flight = in_flight
    for kb in range(steps):
        s = j % STAGES
        if REFILL_FIRST:
            _refill(descs, ring, j, kb, steps, walk, at, io, STAGES, SWIGLU, PERSISTENT,
                    X_ASYNC, TAIL, WITH_TAIL, False, num_warps)
        mbarrier.wait(ready.index(s), (j // STAGES) & 1)
        for g in gl.static_range(GROUPS):
            pair = PAIRS * PARTS * s + g // 2
            scale2 = _scale_pairs(s_bufs.index(pair), (kb0 + kb) * GROUPS + g, row_layout)
            halves = _halves(_group_words(w_bufs.index(PARTS * s), g, word_layout))
            up_scale2, up_halves = scale2, halves
            if SWIGLU:
                up_scale2 = _scale_pairs(s_bufs.index(pair + PAIRS),
                                         (kb0 + kb) * GROUPS + g, row_layout)
                up_halves = _halves(_group_words(w_bufs.index(PARTS * s + 1), g, word_layout))
            for h in gl.static_range(2):
                # unpack this half (gate and up), issue its wgmmas, retire the previous half's:
                # the A registers of the wgmmas in flight are the wait's deps, so they outlive
                # them. With two groups a stage's last half is retired within it: left in
                # flight across the loop's back edge, ptxas serialized every wgmma (C7513)
                x_buf = _x_half(x_bufs, s, 2 * g + h).permute((1, 0))
                a = _unpack(halves[h], scale2, a_layout, split_layout)
                acc = warpgroup_mma(a, x_buf, acc, is_async=True)
                if WITH_TAIL:
                    xt_buf = _x_half(xt_bufs, s, 2 * g + h).permute((1, 0))
                    acc_t = warpgroup_mma(gl.convert_layout(a, at_layout), xt_buf, acc_t,
                                          is_async=True)
                if SWIGLU:
                    a_up = _unpack(up_halves[h], up_scale2, a_layout, split_layout)
                    acc_up = warpgroup_mma(a_up, x_buf, acc_up, is_async=True)
                    if WITH_TAIL:
                        acc_t_up = warpgroup_mma(gl.convert_layout(a_up, at_layout), xt_buf,
                                                 acc_t_up, is_async=True)
                        acc, acc_up, acc_t, acc_t_up, in_flight, up_in_flight = \
                            warpgroup_mma_wait(num_outstanding=_keep(4, GROUPS, g, h), deps=(
                                acc, acc_up, acc_t, acc_t_up, in_flight, up_in_flight))
                    else:
                        acc, acc_up, in_flight, up_in_flight = warpgroup_mma_wait(
                            num_outstanding=_keep(2, GROUPS, g, h),
                            deps=(acc, acc_up, in_flight, up_in_flight))
                    up_in_flight = a_up
                elif WITH_TAIL:
                    acc, acc_t, in_flight = warpgroup_mma_wait(
                        num_outstanding=_keep(2, GROUPS, g, h), deps=(acc, acc_t, in_flight))
                else:
                    acc, in_flight = warpgroup_mma_wait(
                        num_outstanding=_keep(1, GROUPS, g, h), deps=(acc, in_flight))
                in_flight = a
                if g + h == 0:  # step j - 1's last wgmma just retired
                    if not REFILL_FIRST:
                        _refill(descs, ring, j, kb, steps, walk, at, io, STAGES, SWIGLU,
                                PERSISTENT, X_ASYNC, TAIL, WITH_TAIL, RELEASE, num_warps)
                    elif RELEASE:  # where it was: at the program's start it slowed the program
                        _release(kb, steps, walk, STAGES, PERSISTENT)
        j += 1
    acc, acc_up = warpgroup_mma_wait(num_outstanding=0, deps=(acc, acc_up))
    if WITH_TAIL:
        acc_t, acc_t_up = warpgroup_mma_wait(num_outstanding=0, deps=(acc_t, acc_t_up))
        _epilogue(acc_t, acc_t_up, row_start + BLOCK_M, row_end, nb, y_ptr, p_ptr, N,
                  stride_ym, SWIGLU, HAS_PROBS, STAGE_ACC)
    return acc, acc_up, j


@gluon.jit
def _epilogue(acc, acc_up, first_row, row_end, nb, y_ptr, p_ptr, N, stride_ym,
              SWIGLU: gl.constexpr, HAS_PROBS: gl.constexpr, STAGE_ACC: gl.constexpr):
    """Store accumulated token rows first_row.. (below row_end), the SwiGLU applied with
    SWIGLU, else with HAS_PROBS each row's rounded output times its router prob (Marlin's
    order, numerics.scaled). STAGE_ACC: the fp32 accumulator moves to the store layout
    (through shared memory) before the prob, not its bf16 output after it: the same bits,
    faster on some tiles, slower on others (gluon_stage_acc, round 62)."""
    BLOCK_N: gl.constexpr = acc.shape[0]
    BLOCK_M: gl.constexpr = acc.shape[1]
    out_layout: gl.constexpr = gl.BlockedLayout([8, 1], [16, 2], [1, 4], [0, 1])
    if SWIGLU:  # torch's roundings (numerics.swiglu), as the unfused GEMM then activation
        acc = numerics.swiglu(acc, acc_up, False)
    elif HAS_PROBS:
        if STAGE_ACC:
            acc = gl.convert_layout(acc, out_layout)
        tokens = first_row + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, acc.type.layout))
        prob = gl.load(p_ptr + tokens, mask=tokens < row_end, other=0.0).to(gl.float32)
        if not STAGE_ACC:
            # first an fp32 add of the prob's zero: ptxas hoisted bf16 packs (F2FP) of the
            # wgmma accumulator above its last wait (persistent builds stored partial sums on
            # the GPU, session 70; the compile tests check every build), and keeps fp32
            # arithmetic on it after the wait
            acc = acc + gl.expand_dims(prob * 0.0, 0)
        acc = numerics.scaled(acc, gl.expand_dims(prob, 0), True, False)
    out = gl.convert_layout(acc.to(gl.bfloat16), out_layout)
    rows = first_row + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, out_layout))
    cols = nb * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, out_layout))
    ptrs = y_ptr + gl.expand_dims(rows.to(gl.int64) * stride_ym, 0) + gl.expand_dims(cols, 1)
    gl.store(ptrs, out, mask=gl.expand_dims(rows < row_end, 0) & gl.expand_dims(cols < N, 1))


@gluon.jit(do_not_specialize=["num_experts"])
def _w4a16_gluon_kernel(w_desc, x_desc, xt_desc, x_ptr, s_ptr, y_ptr, p_ptr, counts_ptr,
                        partials_ptr, counters_ptr,
                        num_experts, N, K, stride_xm, stride_se, stride_sn, stride_ym,
                        acc_layout: gl.constexpr, tail_layout: gl.constexpr,
                        word_layout: gl.constexpr, split_layout: gl.constexpr,
                        E_PAD: gl.constexpr, STAGES: gl.constexpr, SWIGLU: gl.constexpr,
                        HAS_PROBS: gl.constexpr, PERSISTENT: gl.constexpr,
                        X_ASYNC: gl.constexpr, TAIL: gl.constexpr, RELEASE: gl.constexpr,
                        EARLY_WORDS: gl.constexpr, REFILL_FIRST: gl.constexpr,
                        SPLIT_K: gl.constexpr, STAGE_ACC: gl.constexpr,
                        num_warps: gl.constexpr):
    """N: output columns. With SWIGLU the weight has 2N rows per expert, [gate; up], and a
    program accumulates the gate and the up rows of its columns over the same x tiles.
    TAIL: an expert's last row tile takes up to TAIL rows past BLOCK_M (xt_desc's boxes), in a
    loop that also runs a narrow wgmma on them with the same A registers: an expert a few
    rows over BLOCK_M costs a tail, not a second tile that unpacks its weights again
    (round 16). Without TAIL, xt_desc is x_desc and unused.
    PERSISTENT: a program walks tiles pid, pid + grid, ... and its ring runs on across them,
    so the next tile's first blocks load during this tile's last ones and its epilogue (the
    host keeps STAGES - 1 <= K / BLOCK_K: the ring reaches at most one tile ahead). Else one
    tile per program: the tile loop and the look-ahead cost 10 and 11 registers, one CTA per
    SM fewer at 64 x 128 tiles (round 12).
    REFILL_FIRST (stages of several groups, one tile a program): each K step first refills the
    previous step's stage, then waits for its own (_tile).
    SPLIT_K (one tile a program, no tail or early words): program (tile, s) of grid axis 1 takes
    slice s of K, and the last of a tile's programs to finish adds the slices (gate and up with
    SWIGLU) in slice order (split_k.gluon_split_sum): the few tiles of a dense call's grid, or
    of a decode batch's few touched experts, fill the SMs."""
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[1]
    PARTS: gl.constexpr = 2 if SWIGLU else 1

    GROUPS: gl.constexpr = w_desc.block_type.shape[1] // WORDS  # scale groups per stage
    w_bufs = gl.allocate_shared_memory(gl.int32, [PARTS * STAGES, BLOCK_N, GROUPS * WORDS],
                                       w_desc.layout)
    x_bufs = gl.allocate_shared_memory(gl.bfloat16, [STAGES, 2 * GROUPS, BLOCK_M, HALF_K],
                                       x_desc.layout)
    xt_bufs = x_bufs
    if TAIL:
        xt_bufs = gl.allocate_shared_memory(gl.bfloat16, [STAGES, 2 * GROUPS, TAIL, HALF_K],
                                            xt_desc.layout)
    PAIRS: gl.constexpr = (GROUPS + 1) // 2
    s_bufs = gl.allocate_shared_memory(gl.int32, [PARTS * STAGES * PAIRS, BLOCK_N],
                                       gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    n_blocks = gl.cdiv(N, BLOCK_N)
    tile = gl.program_id(0)
    guessed = tile < num_experts * n_blocks
    if EARLY_WORDS:  # before the previous kernel is done: the words of the guessed first tile
        early = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
        mbarrier.init(early.index(0), count=1)
        if guessed:
            mbarrier.expect(early.index(0), (STAGES - 1) * PARTS * w_desc.block_type.nbytes)
            for i in gl.static_range(STAGES - 1):
                _issue_words(w_desc, w_bufs, early.index(0), i, i, tile // n_blocks,
                             tile % n_blocks * BLOCK_N, N, SWIGLU)
    wait_for_previous_grid()  # launched with PDL: counts and x may still be being written
    tables = expert_tables(counts_ptr, num_experts, x_desc.shape[1], BLOCK_M, E_PAD, num_warps,
                           TAIL)
    tiles = row_tile_count(tables, num_warps) * n_blocks
    grid = gl.num_programs(0)
    if tile >= tiles:  # the grid is a bound
        if EARLY_WORDS:
            if guessed:  # no copy may land in an exited CTA's memory
                mbarrier.wait(early.index(0), 0)
        return
    # with no zero-trip path through the K loop ptxas keeps the wgmmas pipelined: the path
    # that left the loop with zeroed accumulators made it serialize them (round 11)
    gl.assume(K >= SPLIT_K * GROUPS * BLOCK_K)
    steps = K // (SPLIT_K * GROUPS * BLOCK_K)
    gl.assume(steps > 0)
    split = 0
    kb0 = 0  # the first K step of the program's slice
    if SPLIT_K > 1:  # without: the whole-K kernel's code, unchanged
        split = gl.program_id(1)
        kb0 = split * steps
    descs = (w_desc, x_desc, xt_desc)
    ring = (w_bufs, x_bufs, xt_bufs, s_bufs, ready)
    io = (x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, y_ptr, p_ptr, stride_ym)
    layouts: gl.constexpr = (acc_layout, tail_layout, word_layout, split_layout)
    expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts, BLOCK_M,
                                             num_warps, TAIL)
    first = (expert, nb * BLOCK_N, row_start, row_end, kb0)
    if EARLY_WORDS:
        if warp_uniform(guessed & (expert * n_blocks + nb == tile)):  # the guess was right
            _prologue(descs, ring, first, io, STAGES, SWIGLU, X_ASYNC, TAIL, False, num_warps)
            mbarrier.wait(early.index(0), 0)
        else:
            if guessed:  # the guess's words land before this tile's are asked for
                mbarrier.wait(early.index(0), 0)
            _prologue(descs, ring, first, io, STAGES, SWIGLU, X_ASYNC, TAIL, True, num_warps)
    else:
        _prologue(descs, ring, first, io, STAGES, SWIGLU, X_ASYNC, TAIL, True, num_warps)

    j = 0  # K blocks consumed by this program: the ring's position
    for tile in range(tile, tiles if PERSISTENT else tile + 1, grid if PERSISTENT else 1):
        # looked up again rather than carried from the prologue (or the previous tile): carried,
        # ptxas kept it live through the ring, 167 -> 254 registers at 64 x 128 (round 12)
        expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts, BLOCK_M,
                                                 num_warps, TAIL)
        walk = (tile, grid, tiles, tables, n_blocks, num_experts)
        at = (expert, row_start, row_end, nb, kb0)
        if TAIL:  # the loop with the tail's wgmma only for tiles that have one
            if warp_uniform(row_start + BLOCK_M < row_end):
                acc, acc_up, j = _tile(descs, ring, j, steps, walk, at, io, layouts, STAGES,
                                       SWIGLU, HAS_PROBS, PERSISTENT, X_ASYNC, TAIL, True,
                                       RELEASE, REFILL_FIRST, STAGE_ACC, num_warps)
            else:
                acc, acc_up, j = _tile(descs, ring, j, steps, walk, at, io, layouts, STAGES,
                                       SWIGLU, HAS_PROBS, PERSISTENT, X_ASYNC, TAIL, False,
                                       RELEASE, REFILL_FIRST, STAGE_ACC, num_warps)
        else:
            acc, acc_up, j = _tile(descs, ring, j, steps, walk, at, io, layouts, STAGES, SWIGLU,
                                   HAS_PROBS, PERSISTENT, X_ASYNC, TAIL, False, RELEASE,
                                   REFILL_FIRST, STAGE_ACC, num_warps)
        last = True  # whole K: every program stores its tile
        if SPLIT_K > 1:
            last, acc, acc_up = gluon_split_sum(acc, acc_up, partials_ptr, counters_ptr, tile,
                                                split, SPLIT_K, PARTS, num_warps)
        if last:
            _epilogue(acc, acc_up, row_start, row_end, nb, y_ptr, p_ptr, N, stride_ym, SWIGLU,
                      HAS_PROBS, STAGE_ACC)
    # the barriers end here, invalidated: PTX wants that before their memory holds anything
    # else, and the epilogue's layout scratch took a finished one's (round 19: 8-byte
    # clobbers of the output, early_stress.txt)
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))
    if EARLY_WORDS:
        mbarrier.invalidate(early.index(0))


_LAUNCH = CachedLaunch(_w4a16_gluon_kernel)


def applies(x: torch.Tensor, qweight) -> bool:
    """Hopper, 128-input groups, K in whole groups, tensors TMA can read (contiguous rows,
    16-byte aligned), and scales readable as words of group pairs (an even group count)."""
    data = qweight.data
    return (x.is_cuda and is_hopper(x.device)
            and qweight.scheme.group_size == GROUP and qweight.in_features % GROUP == 0
            and data.dim() in (2, 3) and data.is_contiguous() and data.data_ptr() % 16 == 0
            and scale_words_fit(qweight.scale)
            and x.stride(-1) == 1 and x.stride(0) % 8 == 0 and x.data_ptr() % 16 == 0)


def word_layout(swizzle: int = 0) -> gl.NVMMASharedLayout:
    """Shared memory of a stage's lane-order code words, swizzled by `swizzle` bytes."""
    return gl.NVMMASharedLayout(swizzle_byte_width=swizzle, element_bitwidth=32, rank=2)


_WORD_LAYOUT = word_layout()


def _weight_descriptor(qweight, block_n: int, groups: int,
                       swizzle: int = 0) -> TensorDescriptor:
    """The TMA descriptor of the lane-order codes, kept with them (w4a16_lanes) per box and
    shared-memory swizzle (bytes): made once per weight and freed with it. A descriptor holds
    its tensor, so a module-level cache kept every step's codes and the activations alive
    (0.9 GiB a step for 3 Qwen3-30B-A3B layers once the engine's decode graphs took this
    kernel, session 26)."""
    codes = lane_codes(qweight)
    memo, key = qweight.lane_codes[2], (block_n, groups, swizzle)
    if key not in memo:
        memo[key] = TensorDescriptor.from_tensor(codes.view(-1, codes.shape[-1]),
                                                 [block_n, STAGE_WORDS * groups],
                                                 word_layout(swizzle))
    return memo[key]


def w4a16_grouped_gluon(x: torch.Tensor, qweight, counts: torch.Tensor, block_m: int = 64,
                        block_n: int = 128, stages: int = 3, maxnreg: int = None,
                        ctas_per_sm: int = None, swiglu: bool = False,
                        probs: torch.Tensor = None, x_async: bool = False,
                        pdl: bool = False, tail: int = 0, groups: int = 1,
                        release: bool = False, early_words: bool = False,
                        refill_first: bool = False, max_programs: int = None,
                        split_k: int = 1, stage_acc: bool = False) -> torch.Tensor:
    """Rows of x [T, in] bf16 sorted by expert, int32 counts [E] on x's device, W4A16
    QuantizedWeight [E, out, in] (or [out, in]: one expert, a dense call) -> bf16 [T, out].
    swiglu: the weight is fc1's [gate; up] and the output silu(x @ gate^T) * (x @ up^T),
    [T, out / 2], bit for bit ops.reference_gated_activation of this kernel's unfused output.
    probs [T] (not with swiglu): each row's router prob, multiplying its rounded output.
    maxnreg: a register cap, for one more CTA per SM: ptxas then retires each wgmma before the
    next (no pipelining), which
    short-K shapes of many experts trade for the occupancy (round 11). ctas_per_sm: a
    persistent grid of that many programs per SM, each walking tiles with its ring running
    across them; None: one program per tile (bound). x_async: x by cp.async of the tile's own
    token rows instead of TMA boxes (gluon_x_async): the same bits. pdl: launch with
    programmatic dependent launch (gluon_pdl), so the launch overlaps the previous
    kernel's drain; the kernel waits for that kernel before its first read either way. Its
    CTAs let the next kernel in as they exit, or with release once each has issued its last
    load (gluon_release); releasing it at their start let its waiting CTAs slow
    this one by up to 1.33x (round 15). tail: token rows a tile holds past block_m
    (gluon_tail), multiplied by a narrower wgmma on the same unpacked weights where
    a tile has them; x by TMA only. groups: scale groups per ring stage, 1, 2 or 4
    (gluon_groups; the same bits). early_words: before it waits for the previous
    kernel, a program of a grid of one tile a program asks for the first stages' words of the
    tile it would take if every expert had one row tile, and asks again where that guess was
    wrong (gluon_early_words): the kernel launched just before must not write
    qweight. refill_first: each K step refills the previous step's stage before it waits for
    its own, not after its first half (gluon_refill_first; the same bits): stages
    of 2 or 4 groups, one tile a program. max_programs: a cap on the grid of one tile a
    program, whose programs then walk the tiles as a persistent grid's (gluon_walk:
    x padded past the rows routing fills). split_k: slices of K over grid axis 1, added in
    slice order (split_k.py; gluon_dense_tiles, gluon_split): one tile a program,
    without tail or early words. stage_acc (with probs): the epilogue moves the fp32
    accumulator to the store layout before the prob (gluon_stage_acc; the same bits)."""
    data, scale = qweight.data, qweight.scale
    num_experts = data.shape[0] if data.dim() == 3 else 1
    n = data.shape[-2]
    n_out = n // 2 if swiglu else n
    rows, k = x.shape[0], qweight.in_features
    y = torch.empty(rows, n_out, device=x.device, dtype=torch.bfloat16)
    if rows == 0:
        return y
    if swiglu and probs is not None:
        raise ValueError("probs: the router probs scale fc2's output; the fused SwiGLU (fc1) "
                         "takes none")
    if groups not in (1, 2, 4) or k % (GROUP * groups):
        raise ValueError(f"groups={groups}: 1, 2 or 4 scale groups per stage, dividing K={k}")
    grid = triton.cdiv(n_out, block_n) * tile_bound(rows, num_experts, block_m)
    if ctas_per_sm:
        grid = min(grid, ctas_per_sm * sm_count(x.device))
    persistent = bool(ctas_per_sm) or (max_programs is not None and max_programs < grid)
    grid = min(grid, max_programs or grid)
    if refill_first and (groups == 1 or persistent):
        raise ValueError(f"refill_first: stages of 2 or 4 groups (groups={groups}) and one "
                         f"tile a program (ctas_per_sm={ctas_per_sm} must be None, and "
                         f"max_programs={max_programs} not below the grid's bound)")
    if split_k > 1 and (persistent or tail or early_words or k % (GROUP * groups * split_k)):
        raise ValueError(f"split_k={split_k}: one tile a program without tail or early words, "
                         f"and K={k} in {split_k} slices of whole stages of {groups} groups")
    split_k, partials, counters = split_buffers(split_k, grid, block_m * block_n * (1 + swiglu),
                                                torch.float32, y)
    w_desc = _weight_descriptor(qweight, block_n, groups)
    if tail and (x_async or tail not in (8, 16, 32, 64)):
        raise ValueError(f"tail={tail}: 8, 16, 32 or 64 token rows, with x by TMA (x_async off)")
    x_desc = x_descriptor(x, block_m, groups)
    xt_desc = x_descriptor(x, tail, groups) if tail else x_desc
    words = scale.view(torch.int32)  # group pairs (applies: scale_words_fit)
    words = words if words.dim() == 3 else words.unsqueeze(0)
    acc, word_layout, operand = _layouts(block_n, block_m)
    _LAUNCH(
        (grid, split_k), w_desc, x_desc, xt_desc, x, words, y, x if probs is None else probs,
        counts, partials, counters, num_experts, n_out, k, x.stride(0), words.stride(0),
        words.stride(1), y.stride(0), acc,
        _acc_layout(tail or block_m), word_layout, operand,
        E_PAD=table_size(num_experts),
        STAGES=min(stages, k // (GROUP * groups * split_k) + 1),
        SWIGLU=swiglu, HAS_PROBS=probs is not None, PERSISTENT=persistent,
        X_ASYNC=x_async, TAIL=tail, RELEASE=release, EARLY_WORDS=early_words and not persistent,
        REFILL_FIRST=refill_first, SPLIT_K=split_k,
        STAGE_ACC=stage_acc and probs is not None, num_warps=4, launch_pdl=pdl,
        **({} if maxnreg is None else {"maxnreg": maxnreg}))
    return y


def x_descriptor(x: torch.Tensor, rows: int, groups: int) -> TensorDescriptor:
    """The TMA box of a stage's x: `rows` token rows of its 2 * groups halves of 64 inputs, one
    box (x viewed as [K / 64, T, 64]) where 128-byte swizzled rows allow no wider one. A copy
    per half cost a CTA barrier and an elected issue each (round 17)."""
    view = x.as_strided((x.shape[1] // HALF, x.shape[0], HALF), (HALF, x.stride(0), 1))
    return TensorDescriptor.from_tensor(view, [2 * groups, rows, HALF],
                                        _x_layout(rows, 2 * groups))


@functools.lru_cache(maxsize=None)
def _x_layout(rows: int, halves: int):
    return gl.NVMMASharedLayout.get_default_for([halves, rows, HALF], gl.bfloat16)
