"""Which rows of a token-sorted MoE batch a grouped-GEMM program owns, found inside the kernel.

Doing the search on device (a cumsum over at most a few hundred expert counts) keeps the
grouped kernels free of host syncs and extra launches, so they can be CUDA-graph captured.
"""
import triton
import triton.language as tl


def tile_bound(rows: int, num_experts: int, block_m: int) -> int:
    """Upper bound on the number of BLOCK_M row tiles: sum_e ceil(c_e/B) <= min(E, rows) + rows//B."""
    return min(num_experts, rows) + rows // block_m


#: the rows a padded batch's grid is sized for, in multiples of the rows routing is expected
#: to fill: a routing up to this much heavier than expected runs in one pass of the grid
PADDED_GRID_SLACK = 2


def row_tile_grid(rows: int, routed_rows: int, num_experts: int, block_m: int) -> tuple:
    """(row tiles of the grid, whether its programs walk the row tiles). A grid of x's bound
    where x holds routed rows only; where a fixed-size exchange padded x past routed_rows, the
    bound of PADDED_GRID_SLACK x routed_rows and programs that walk on, since thousands of
    programs finding no rows cost more than the GEMM (FP8 at EP8, 128 tokens a rank: 2x)."""
    bound = tile_bound(rows, num_experts, block_m)
    capped = tile_bound(min(rows, PADDED_GRID_SLACK * routed_rows), num_experts, block_m)
    return (capped, True) if capped < bound else (bound, False)


@triton.jit
def expert_tile(counts_ptr, num_experts, total_rows, tile,
                BLOCK_M: tl.constexpr, E_PAD: tl.constexpr, DENSE: tl.constexpr):
    """(expert, first row, row end) of the `tile`-th block of rows; an empty range past the end.
    Rows end at `total_rows` even where the counts sum past it, and negative counts read as 0
    (callers' errors the wrapper cannot see without a host sync): the kernels then never touch
    memory outside x and y. (The Gluon kernels trust the counts, as routing makes them: one
    more op on their path to the first load cost 3-5% at EP8 decode, session 67.)

    DENSE: one expert owning all `total_rows` (a plain linear), no counts read.
    """
    if DENSE:
        expert = tile * 0
        row_start = tile * BLOCK_M
        row_end = total_rows + tile * 0
    else:
        idx = tl.arange(0, E_PAD)
        counts = tl.maximum(tl.load(counts_ptr + idx, mask=idx < num_experts, other=0)
                            .to(tl.int32), 0)
        blocks = (counts + BLOCK_M - 1) // BLOCK_M
        ends = tl.cumsum(blocks, 0)
        expert = tl.sum((ends <= tile).to(tl.int32), 0)
        before = idx < expert
        first_block = tl.sum(tl.where(before, blocks, 0), 0)
        row_start = tl.sum(tl.where(before, counts, 0), 0) + (tile - first_block) * BLOCK_M
        row_end = tl.minimum(tl.sum(tl.where(before | (idx == expert), counts, 0), 0),
                             total_rows)
        expert = tl.minimum(expert, num_experts - 1)
    return expert, row_start, row_end


@triton.jit
def row_tile_count(counts_ptr, num_experts, BLOCK_M: tl.constexpr, E_PAD: tl.constexpr):
    """BLOCK_M row tiles of all experts: sum_e ceil(c_e / BLOCK_M)."""
    idx = tl.arange(0, E_PAD)
    counts = tl.maximum(tl.load(counts_ptr + idx, mask=idx < num_experts, other=0)
                        .to(tl.int32), 0)
    return tl.sum((counts + BLOCK_M - 1) // BLOCK_M, 0)


@triton.jit
def program_tile(counts_ptr, num_experts, total_rows, N, tile,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, E_PAD: tl.constexpr,
                 DENSE: tl.constexpr):
    """The grouped GEMMs' grid: axis 0 walks BLOCK_N weight rows, axis 1 BLOCK_M token rows
    (`tile`: program_id(1), or each row tile a program walks to). Returns (expert, token
    rows, their mask, weight rows, their mask, whether any token row is this program's)."""
    expert, row_start, row_end = expert_tile(
        counts_ptr, num_experts, total_rows, tile, BLOCK_M, E_PAD, DENSE)
    rows = row_start + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    return expert, rows, rows < row_end, offs_n, offs_n < N, row_start < row_end


@triton.jit
def routed_row_end(counts_ptr, num_experts, rows, E_PAD: tl.constexpr):
    """The end of the routed rows (the counts' sum, at most `rows`) where a fixed-size exchange
    padded a batch past them: elementwise kernels skip the rest."""
    idx = tl.arange(0, E_PAD)
    counts = tl.maximum(tl.load(counts_ptr + idx, mask=idx < num_experts, other=0)
                        .to(tl.int32), 0)
    return tl.minimum(rows, tl.sum(counts, 0))
