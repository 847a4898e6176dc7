"""Gluon building blocks shared by the Hopper kernels (fp8_grouped_ws, w4a16_gluon): the names
that differ between Triton 3.6 (the GPU machine) and 3.9 (CI), and the per-expert tables from
which a program finds its rows of a token-sorted MoE batch (expert_tiles does this for the
Triton kernels)."""
import functools

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma

tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
cta_barrier = getattr(gl, "thread_barrier", None) or gl.barrier
cp_async_load = getattr(async_copy, "async_load", None) or async_copy.async_copy_global_to_shared


@gluon.jit
def mbarriers(COUNT: gl.constexpr, ARRIVALS: gl.constexpr):
    """COUNT mbarriers in shared memory ([COUNT, 1]), each completing a phase on ARRIVALS
    arrives."""
    bars = gl.allocate_shared_memory(gl.int64, [COUNT, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(COUNT):
        mbarrier.init(bars.index(i), count=ARRIVALS)
    return bars


@functools.lru_cache(maxsize=None)
def is_hopper(device: torch.device) -> bool:
    return torch.cuda.get_device_capability(device) == (9, 0)


@functools.lru_cache(maxsize=None)
def sm_count(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


@gluon.jit
def wait_for_previous_grid():
    """griddepcontrol.wait. A kernel launched with programmatic dependent launch (launch_pdl)
    may start while the previous kernel in the stream drains; it must read nothing before this
    returns. Without PDL it returns at once."""
    gl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32,
                              is_pure=False, pack=1)


@gluon.jit
def allow_next_grid():
    """griddepcontrol.launch_dependents: the next kernel of the stream, launched with PDL, may
    start once every CTA of this grid has said so or exited. Said once a CTA has issued its
    last load, the next kernel's CTAs come in over this one's drain."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [],
                              dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def warp_uniform(flag):
    """flag (a scalar the same in every thread) as a value ptxas knows to be warp-uniform
    (vote.all): a branch on it keeps the uniform datapath for the loop counters and TMA
    coordinates inside, which a branch on a value from the expert tables loses (round 16,
    w4a16_gluon's K loop under its tail branch: 363 -> 322 SASS instructions, the plain
    kernel's 269)."""
    return gl.inline_asm_elementwise(
        "{ .reg .pred p, q; setp.ne.b32 p, $1, 0; vote.sync.all.pred q, p, 0xffffffff; "
        "selp.b32 $0, 1, 0, q; }", "=r,r", [flag.to(gl.int32)], dtype=gl.int32, is_pure=True,
        pack=1) != 0


def table_size(num_experts: int) -> int:
    """E_PAD of the expert tables: for several experts a power of two of at least a warp's 32
    lanes. With fewer entries (16 at EP8) the table layout repeats them across the lanes and
    ptxas no longer knows the values found in it to be warp-uniform: the loops' shared-memory
    descriptors then live in ordinary registers, an R2UR before each wgmma (132 against 16 in
    the FP8 kernel, 52-64 against 14-15 in the persistent W4A16 ones; docs/kernel_rounds.md,
    round 51). A dense call's one entry keeps a table of one: 32 gave the W4A16 kernel the same
    R2URs and 56-64 more SASS instructions for the scans."""
    return 1 if num_experts == 1 else max(32, triton.next_power_of_2(num_experts))


@gluon.constexpr_function
def _table_layout(e_pad, warps):
    """The expert tables' register layout: every warp holds all e_pad entries."""
    return gl.BlockedLayout([(e_pad + 31) // 32], [32], [warps], [0])


@gluon.jit
def expert_tables(counts_ptr, num_experts, rows, BLOCK_M: gl.constexpr, E_PAD: gl.constexpr,
                  num_warps: gl.constexpr, TAIL: gl.constexpr = 0):
    """The CTA's tables for tile_of, in shared memory, visible to every warp on return, and
    x's rows, where tile_of ends every tile. TAIL: an expert's last row tile may hold up to
    BLOCK_M + TAIL rows."""
    layout: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    tables = (gl.allocate_shared_memory(gl.int32, [E_PAD], layout),
              gl.allocate_shared_memory(gl.int32, [E_PAD], layout),
              gl.allocate_shared_memory(gl.int32, [E_PAD], layout))
    _fill_tables(counts_ptr, num_experts, tables, BLOCK_M, TAIL, E_PAD, num_warps)
    cta_barrier()
    return tables + (rows, )


@gluon.jit
def _add(a, b):
    return a + b


@gluon.jit
def _row_tiles(counts, BLOCK_M: gl.constexpr, TAIL: gl.constexpr):
    """Row tiles of each expert: BLOCK_M rows each, the last up to BLOCK_M + TAIL."""
    return gl.where(counts > 0, gl.maximum((counts + BLOCK_M - 1 - TAIL) // BLOCK_M, 1), 0)


@gluon.jit
def _fill_tables(counts_ptr, num_experts, tables, BLOCK_M: gl.constexpr, TAIL: gl.constexpr,
                 E_PAD: gl.constexpr, num_warps: gl.constexpr):
    """Per expert, into shared memory: its last row tile + 1, first row, and row count. Prefix
    sums by scan, O(E): the [E, E] masked reduction this replaced cost short-K CTAs up to 9%
    (W2 E128 decode, round 11). Here and in the lookups every warp holds all E_PAD entries,
    so the scans and sums stay within a warp (shuffles): one entry per thread spread 128
    experts over the 4 warps, at 18 CTA barriers before the first load against 6 (round 15)."""
    layout: gl.constexpr = _table_layout(E_PAD, num_warps)
    idx = gl.arange(0, E_PAD, layout=layout)
    counts = gl.load(counts_ptr + idx, mask=idx < num_experts, other=0)
    tables[0].store(gl.associative_scan(_row_tiles(counts, BLOCK_M, TAIL), 0, _add))
    tables[1].store(gl.associative_scan(counts, 0, _add) - counts)
    tables[2].store(counts)


@gluon.jit
def row_tile_count(tables, WARPS: gl.constexpr):
    """Row tiles of all experts: the last prefix sum (padding experts add none)."""
    return gl.max(tables[0].load(_table_layout(tables[0].shape[0], WARPS)), 0)


@gluon.jit
def tile_of(tables, tile, n_blocks, num_experts, BLOCK_M: gl.constexpr, WARPS: gl.constexpr,
            TAIL: gl.constexpr = 0):
    """(expert, first row, row end, N-block) of a tile; an empty row range past the last. The
    rows end BLOCK_M after the first but in an expert's last tile, which takes the rest (up
    to BLOCK_M + TAIL), and at x's rows even where the counts sum past them (a caller's error
    the wrapper cannot see without a host sync): no tile touches memory past x or y. Capped
    here, not in the tables' scans, which every CTA waits on before its first load (capped
    there: EP8 decode 3-5% slower, H200)."""
    layout: gl.constexpr = _table_layout(tables[0].shape[0], WARPS)
    tile_ends = tables[0].load(layout)
    row_starts = tables[1].load(layout)
    counts = tables[2].load(layout)
    row_tile = tile // n_blocks
    expert = gl.sum((tile_ends <= row_tile).to(gl.int32), 0)
    idx = gl.arange(0, tile_ends.shape[0], layout=layout)
    mine = idx == expert
    first_tile = gl.sum(gl.where(mine, tile_ends - _row_tiles(counts, BLOCK_M, TAIL), 0), 0)
    first_row = gl.sum(gl.where(mine, row_starts, 0), 0)
    row_start = first_row + (row_tile - first_tile) * BLOCK_M
    row_end = first_row + gl.sum(gl.where(mine, counts, 0), 0)
    row_end = gl.where(row_end - row_start <= BLOCK_M + TAIL, row_end, row_start + BLOCK_M)
    row_end = gl.minimum(row_end, tables[3])
    return gl.minimum(expert, num_experts - 1), row_start, row_end, tile % n_blocks
