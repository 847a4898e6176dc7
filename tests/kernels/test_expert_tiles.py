"""The grouped GEMMs' row tiles (Triton's expert_tile, Gluon's expert tables) never reach past
x's rows, even where tokens_per_expert sums past them: the wrappers cannot check the sum
without a host sync, and a tile past x reads past x and writes past y (found by a review:
INT8, FP8 and W4A16 grouped calls overwrote the memory after y)."""
import pytest
import torch
import triton
import triton.language as tl

from qarl_kernels.expert_tiles import expert_tile, row_tile_grid, tile_bound

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
BLOCK_M = 4
CASES = [
    ([2, 4], 4),  # the second expert runs past x's end
    ([3, 0, 5, 2], 6),  # an expert wholly past the end, one cut, one empty
    ([0, 9], 9),  # counts that sum to the rows: nothing cut
    ([5, 5], 0),  # no rows at all
    ([0, 0, 0, 1], 1),  # a decode step's token on the last expert: more experts than rows
]


@triton.jit
def _triton_tiles(counts_ptr, out_ptr, num_experts, total_rows,
                  BLOCK_M: tl.constexpr, E_PAD: tl.constexpr):
    tile = tl.program_id(0)
    expert, row_start, row_end = expert_tile(counts_ptr, num_experts, total_rows, tile,
                                             BLOCK_M, E_PAD, False)
    tl.store(out_ptr + 3 * tile, expert)
    tl.store(out_ptr + 3 * tile + 1, row_start)
    tl.store(out_ptr + 3 * tile + 2, row_end)


def _owner_of_rows(tiles: torch.Tensor, rows: int) -> list:
    """Each row of x: the expert of the one tile covering it (None: no tile, or several). A
    tile holds the BLOCK_M rows from its first, up to its expert's row end."""
    owner = [None] * rows
    seen = [0] * rows
    for expert, start, end in tiles.tolist():
        assert end <= rows, f"a tile's rows end at {end}, past x's {rows} rows"
        for r in range(start, min(start + BLOCK_M, end)):
            owner[r], seen[r] = expert, seen[r] + 1
    return [o if s == 1 else None for o, s in zip(owner, seen)]


def _expected_owners(counts: list, rows: int) -> list:
    return [e for e, c in enumerate(counts) for _ in range(c)][:rows]


def test_tile_bound_counts_only_experts_rows_can_touch():
    """sum_e ceil(c_e / B) <= min(E, rows) + rows // B: one token of top-8 at E128 touches at
    most 8 experts (a grid of 128 programs would launch 120 that find no rows)."""
    assert tile_bound(8, 128, 16) == 8 and tile_bound(0, 128, 16) == 0
    assert tile_bound(4096, 16, 128) == 16 + 32


@pytest.mark.parametrize("rows,routed,experts,block_m,grid", [
    (100, 100, 16, 16, (22, False)),  # x holds the routed rows: its bound, 16 + 100 // 16
    (100, 60, 16, 16, (22, False)),  # padded under twice the routed rows: the same
    (400, 60, 16, 16, (23, True)),  # past it: the bound of 120 rows, walked on
    (40, 16, 8, 64, (8, False)),  # past it, but no fewer tiles: one each, no walk
])
def test_padded_grid_walks_only_where_it_has_fewer_programs(rows, routed, experts, block_m,
                                                          grid):
    """row_tile_grid: a fixed-size exchange's padded x gets the bound of twice its expected
    rows, whose programs walk on, only where that bound is below x's (a walking grid costs its
    loop, and the Gluon kernel's early words and refills first)."""
    assert row_tile_grid(rows, routed, experts, block_m) == grid


@pytest.mark.parametrize("counts,rows", CASES)
def test_triton_tiles_end_at_x_rows(counts, rows, device):
    grid = tile_bound(sum(counts), len(counts), BLOCK_M)
    out = torch.full((grid, 3), -1, dtype=torch.int32, device=device)
    _triton_tiles[(grid,)](torch.tensor(counts, dtype=torch.int32, device=device), out,
                           len(counts), rows, BLOCK_M=BLOCK_M,
                           E_PAD=triton.next_power_of_2(len(counts)))
    assert _owner_of_rows(out.cpu(), rows) == _expected_owners(counts, rows)


def test_triton_tiles_read_negative_counts_as_none(device):
    """Prefix sums of [-2, 5, 5] started expert 1 at row -2: the kernels read x[-2] and wrote
    y[-2] (a review). Routing never makes such counts; the Triton kernels are safe anyway."""
    counts, rows = [-2, 5, 5], 10
    grid = tile_bound(rows, len(counts), BLOCK_M)
    out = torch.full((grid, 3), -1, dtype=torch.int32, device=device)
    _triton_tiles[(grid,)](torch.tensor(counts, dtype=torch.int32, device=device), out,
                           len(counts), rows, BLOCK_M=BLOCK_M,
                           E_PAD=triton.next_power_of_2(len(counts)))
    tiles = out.cpu()
    assert (tiles[:, 1] >= 0).all()
    assert _owner_of_rows(tiles, rows) == _expected_owners(counts, rows)


def test_triton_tiles_read_no_count_past_the_experts_and_name_one(device):
    """Counts in a view of a larger buffer (one rank's slice of a routing table): the count
    stored after them is no expert's, so the padding rows past them stay unowned. And the
    grid's spare tiles name an existing expert: the kernels read that expert's weight scales
    (the one-block FP8 path without a mask), which past the last expert lie outside them."""
    buffer = torch.tensor([3, 0, 5, 7], dtype=torch.int32, device=device)
    rows = 10  # 8 routed, 2 padding
    grid = tile_bound(rows, 3, BLOCK_M)
    out = torch.full((grid, 3), -1, dtype=torch.int32, device=device)
    _triton_tiles[(grid,)](buffer[:3], out, 3, rows, BLOCK_M=BLOCK_M, E_PAD=4)
    tiles = out.cpu()
    assert _owner_of_rows(tiles, rows) == _expected_owners([3, 0, 5], rows) + [None, None]
    assert ((tiles[:, 0] >= 0) & (tiles[:, 0] < 3)).all()


if HOPPER:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl

    from qarl_kernels.gluon_hopper import expert_tables, row_tile_count, table_size, tile_of

    @gluon.jit
    def _gluon_tiles(counts_ptr, out_ptr, num_experts, rows, BLOCK_M: gl.constexpr,
                     E_PAD: gl.constexpr, num_warps: gl.constexpr):
        tables = expert_tables(counts_ptr, num_experts, rows, BLOCK_M, E_PAD, num_warps)
        tile = gl.program_id(0)
        if tile < row_tile_count(tables, num_warps):
            expert, row_start, row_end, _ = tile_of(tables, tile, 1, num_experts, BLOCK_M,
                                                    num_warps)
            gl.store(out_ptr + 3 * tile, expert)
            gl.store(out_ptr + 3 * tile + 1, row_start)
            gl.store(out_ptr + 3 * tile + 2, row_end)


@pytest.mark.skipif(not HOPPER, reason="Gluon needs an SM90 GPU")
@pytest.mark.parametrize("counts,rows", CASES)
def test_gluon_tables_end_at_x_rows(counts, rows):
    grid = tile_bound(sum(counts), len(counts), BLOCK_M)
    out = torch.zeros((grid, 3), dtype=torch.int32, device="cuda")  # unwritten: empty tiles
    _gluon_tiles[(grid,)](torch.tensor(counts, dtype=torch.int32, device="cuda"), out,
                          len(counts), rows, BLOCK_M=BLOCK_M, E_PAD=table_size(len(counts)),
                          num_warps=4)
    assert _owner_of_rows(out.cpu(), rows) == _expected_owners(counts, rows)
