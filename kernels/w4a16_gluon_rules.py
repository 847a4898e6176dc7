"""Which tiles and launch options the Gluon W4A16 kernel (w4a16_gluon) takes for a call's shape.

Each rule is a fit to measured sweeps, its docstring naming the rounds of docs/kernel_rounds.md
and the cells that set each bound: tiles of dense calls in CUDA graphs (gluon_dense_tiles),
tiles of grouped calls and of the fused fc1 + SwiGLU (gluon_tiles, gluon_swiglu_tiles), and
the launch options beside them (gluon_launch). w4a16_gemm's routes ask these; tune.py sweeps
around them.
"""
import triton

from .expert_tiles import row_tile_grid
from .w4a16_gluon import GROUP as GLUON_GROUP

#: tokens up to which a dense call in CUDA-graph capture takes the Gluon kernel: at 512 it
#: takes 0.74-0.94x of the bf16 operand path's time at attention's projections (round 34;
#: with the operand kept, w4a16_gemm.DENSE_KEPT_GLUON_MAX_ROWS)
DENSE_GLUON_MAX_ROWS = 512


def gluon_dense_tiles(rows: int, n: int, k: int, sms: int):
    """(block_m, block_n, stages, groups, split_k) of the Gluon kernel for a dense call of `rows`
    tokens on a GPU of `sms` SMs, or None past DENSE_GLUON_MAX_ROWS. Fitted to an H100 sweep
    of 288 configurations at attention's projections and their TP2 halves, 1-512 tokens
    (round 34: each cell within 1.18x of its best, 1.04x on average): 64-row weight tiles;
    token tiles of 8, 16, 32, 64 (to 256 tokens) and 128; stages of two groups while the tiles
    fit one program an SM, else one (two stages of two groups filled an SM at 64 tokens a
    tile, and a second wave cost 1.3x); K split while the programs fit eight waves of 8- and
    16-token tiles, one of larger ones."""
    if rows > DENSE_GLUON_MAX_ROWS or k % (2 * GLUON_GROUP):
        return None
    block_m = (8 if rows <= 8 else 16 if rows <= 16 else 32 if rows <= 32 else 64 if rows <= 256
               else 128)
    programs = triton.cdiv(n, 64) * triton.cdiv(rows, block_m)
    groups = 2 if programs <= sms else 1
    split, waves = 1, 8 if block_m <= 16 else 1
    while split < 8 and programs * split * 2 <= waves * sms and k % (GLUON_GROUP * groups
                                                                     * split * 2) == 0:
        split *= 2
    return block_m, 64, 2 if block_m == 128 else 3, groups, split


#: host time per eager call (H100 host, W13 EP8 M=64, round 8): 87 us for the Gluon kernel
#: (Triton's Gluon launch path and two TMA descriptors), 55 us for w4a16_gemm's Triton kernel.
#: Outside CUDA-graph capture the Gluon kernel is taken only where its GPU time saves more than
#: that: from 64 tokens per expert with many experts (E128 M=1024: 201 vs 278 us).
EAGER_GLUON_MIN_EXPERTS = 64
EAGER_GLUON_ROWS_PER_EXPERT = 64

#: programs per SM of the Gluon kernel's persistent grid (gluon_tiles)
PERSISTENT_CTAS_PER_SM = 3
#: programs per SM of TP2's grid under 2 tokens per expert: one or two tiles a program (round 13)
FEW_ROWS_CTAS_PER_SM = 5


def _few_rows(num_experts: int, n: int, k: int) -> bool:
    """Grids of few weight rows at long K: W13 at EP8, and at TP2 (n halved)."""
    return k >= 2048 and (num_experts < 64 or n < 1536)


def gluon_tiles(rows: int, num_experts: int, n: int, k: int, capturing: bool = True):
    """(block_m, block_n, stages, maxnreg, ctas_per_sm) of the Gluon kernel for a grouped GEMM
    with n weight rows per expert where it beats w4a16_gemm's Triton kernel, else None. A
    persistent grid (ctas_per_sm) where a grid holds many short tiles: W2 at E128 up to 32 tokens per
    expert, and the few-row grids of 8-token tiles (round 12; TP2 under 2 tokens per expert
    5 programs an SM, round 13). Elsewhere the tile loop's registers cost more than the ring
    running on across tiles gains. Where stages of several scale groups won, their own tiles
    (_grouped_tiles)."""
    tiles = _gluon_tile_shape(rows, num_experts, n, k, capturing)
    if tiles is None:
        return None
    grouped = _grouped_tiles(rows, num_experts, n, k)
    if grouped:
        return grouped[:5]
    per_expert = rows // max(1, num_experts)
    ctas_per_sm = None
    if rows >= 32 and k < 2048 and num_experts >= 64 and per_expert < 32:
        # under 8 tokens 4 per SM: about 29 experts' 464 tiles, one per program (round 13)
        ctas_per_sm = 4 if rows < 64 else PERSISTENT_CTAS_PER_SM
    elif rows >= 32 and _few_rows(num_experts, n, k) and per_expert <= 4:
        # TP2 under 2 tokens per expert: 5 per SM, one program per tile up to 55 touched experts
        ctas_per_sm = (FEW_ROWS_CTAS_PER_SM if num_experts >= 64 and per_expert < 2
                       else PERSISTENT_CTAS_PER_SM)
    return tiles + (ctas_per_sm, )


#: tokens per expert up to which the Gluon kernel's tiles are tuned; past them, on Hopper, the
#: warp-specialized kernel (WS_ROWS_PER_EXPERT)
GLUON_MAX_ROWS_PER_EXPERT = 128


def _gluon_tile_shape(rows: int, num_experts: int, n: int, k: int, capturing: bool):
    """gluon_tiles' (block_m, block_n, stages, maxnreg) with one group a stage, from the H100
    tuner (`python -m qarl_kernels.tune --only w4a16-gluon`, rounds 11-13). Up to 4 tokens per
    expert the x tiles hold 8 tokens, since most of a 16-token tile would be padding. Grids of
    few weight rows at K >= 2048 (W13 at EP8, and at TP2 with n halved) take 64-row weight
    tiles from 8 tokens per expert, for more CTAs. W13 at E128 takes a register cap from 8 to
    31 tokens per expert instead: one more CTA per SM, for serialized wgmmas."""
    per_expert = rows // max(1, num_experts)
    if per_expert > GLUON_MAX_ROWS_PER_EXPERT:
        return None
    if not capturing and (num_experts < EAGER_GLUON_MIN_EXPERTS
                          or per_expert < EAGER_GLUON_ROWS_PER_EXPERT):
        return None
    few_rows = _few_rows(num_experts, n, k)
    cap = 128 if k >= 2048 else None  # K >= 2048 and not few_rows: W13 at E128
    if per_expert <= 4:
        if cap and not few_rows and 32 <= rows < num_experts:  # W13 E128 M=8
            return 16, 128, 2, 96
        if rows < 32:  # one token: 64-row weight tiles, for more CTAs
            return 8, 64, 3, None
        # EP8 (W13 M=8 13.8 vs 14.0 us, W2 8.8 vs 9.2): a deeper ring
        narrow = few_rows and (num_experts < 64 or per_expert < 2)
        return 8, 64 if narrow else 128, 4 if num_experts < 64 else 3, None
    if per_expert < 16:
        if few_rows:  # W13 EP8 M=16 (32-token tiles) 14.7 us; TP2 M=128
            return 32 if per_expert >= 8 and num_experts < 64 else 16, 64, 3, None
        return 16, 128, 3, cap
    if per_expert >= 32 and gluon_tail(rows, num_experts, n, k):  # W13 EP8 M=120-144
        return 64, 64, 2, None
    if per_expert < 64:
        if few_rows:  # W13 EP8 M=32 16.5 us, M=64 17.2
            return 64 if num_experts < 64 else 32, 64, 3, None
        if per_expert < 32 and num_experts >= 64:
            return 32, 128, 3, cap
        return 64, 128, 3, None  # W2 at EP8 from 17 per expert: 64-token tiles (round 19)
    if num_experts >= 64:
        return 64, 128, 3, None
    # EP8 from 64 tokens per expert (round 13): one 128-token tile per expert, in one wave
    # while at most 264 CTAs (2 per SM) hold them all; each expert past 128 rows adds a row of
    # tiles as costly as a full one. From 120 per expert (W13; W2 from 112) most routings
    # cross that wave, so 64-token tiles.
    if k >= 2048:
        if per_expert <= 64:
            return 64, 64, 2, None
        return (128, 128, 2, None) if per_expert < 120 else (64, 128, 3, None)
    if per_expert < 112:
        return 128, 128, 2, None
    if per_expert < 128:
        return 64, 64, 2, None
    # W2 at 128 per expert: 64-token tiles, steadier over routings than 128-token ones (round 13)
    return 64, 128, 2, None


def gluon_swiglu_tiles(rows: int, num_experts: int, n: int, k: int) -> tuple:
    """(block_m, block_n, stages, maxnreg, ctas_per_sm) of the fused fc1 + SwiGLU in Gluon, n
    the gate + up rows. Each program holds 64 gate and 64 up rows, twice the GEMM's registers.
    So W13 at EP8 takes smaller token tiles than the GEMM's up to 80 tokens per expert, and
    TP2 at 2-4 tokens per expert a 96-register cap with two stages (round 12). Elsewhere it
    takes the GEMM's token tile, stages (at least three; two for 128-token tiles, which fit
    no more) and register cap. Where stages of several scale groups won, their own tiles
    (_grouped_tiles, round 17)."""
    grouped = _grouped_tiles(rows, num_experts, n, k, swiglu=True)
    if grouped:
        return grouped[:5]
    return _swiglu_tile_shape(rows, num_experts, n, k) + (None, )


def _swiglu_tile_shape(rows: int, num_experts: int, n: int, k: int) -> tuple:
    """gluon_swiglu_tiles' (block_m, block_n, stages, maxnreg) with one group a stage."""
    per_expert = rows // max(1, num_experts)
    few_rows = _few_rows(num_experts, n, k)
    if num_experts < 64 and few_rows:
        if per_expert <= 8:
            return 8, 64, 4, None
        if gluon_tail(rows, num_experts, n, k, swiglu=True):  # M=120-128
            return 32, 64, 3, 160
        if per_expert < 80:
            return (32, 64, 4, None) if per_expert < 64 else (32, 64, 3, 128)
        # 128-token tiles from 80 to 111 per expert, then 64-token ones, which no routing
        # pushes past a wave (round 13)
        return (128, 64, 2, None) if per_expert < 112 else (64, 64, 3, None)
    # TP2 at M=32 and 64, and EP2's 64 experts at 2-4 rows an expert: 96 registers, two
    # stages (EP2, session 28: 1.06-1.11x the E128 rules' tiles, uniform and skewed routing;
    # from 5 rows the E128 rules' persistent tiles won, 1.04-1.15x)
    ep2 = 64 <= num_experts < 128 and k >= 2048
    if (few_rows or ep2) and 2 <= per_expert <= 4:
        return 8, 64, 2, 96
    block_m, _, stages, maxnreg = _gluon_tile_shape(rows, num_experts, n, k, capturing=True)
    return block_m, 64, 2 if block_m >= 128 else max(3, stages), maxnreg


def gluon_x_async(rows: int, num_experts: int, n: int, k: int, swiglu: bool = False) -> bool:
    """Whether the Gluon kernel takes x by cp.async of each tile's own token rows (the rest
    zero-filled, unread) rather than by TMA boxes: where a tile holds a token or a few, that is
    one-token calls and EP8's fused fc1 up to 8 tokens per expert (round 14). Elsewhere a box,
    one instruction that holds no pointers in registers, is as fast or faster."""
    per_expert = rows // max(1, num_experts)
    return rows < 32 or (swiglu and num_experts < 64 and _few_rows(num_experts, n, k)
                         and per_expert <= 8)


#: rows per expert (inclusive ranges) where an expert's last row tile takes up to TAIL_ROWS
#: more (gluon_tail): W13 at EP8, the GEMM (32-token tiles of two groups, then 64-token tiles)
#: and the fused fc1 + SwiGLU
TAIL_RANGES = {False: ((13, 24), (60, 72)), True: ((60, 64), )}
TAIL_ROWS = 16


def gluon_tail(rows: int, num_experts: int, n: int, k: int, swiglu: bool = False) -> int:
    """Token rows an expert's last row tile takes past block_m (w4a16_gluon's TAIL), with the
    tiles gluon_tiles / gluon_swiglu_tiles give there. Where routing puts many experts a few
    rows over the token tile, each of those would cost a second row tile that unpacks its
    weights again, or a row tile past the wave. The tail's wgmma (n = 16) runs at about half
    the rate of the tile's, so it pays only in TAIL_RANGES: W13 at EP8 near 64 rows per expert
    (round 16), and from 13 to 24 on 32-token tiles of two groups (round 20). Elsewhere it lost
    under skew or to the plain tiles. At 32 rows per expert no tile with a tail fits 3
    programs an SM without a skewed routing spilling a wave (round 21)."""
    per_expert = rows // max(1, num_experts)
    ep8_w13 = num_experts < 64 and _few_rows(num_experts, n, k)
    inside = any(lo <= per_expert <= hi for lo, hi in TAIL_RANGES[swiglu])
    return TAIL_ROWS if ep8_w13 and inside else 0


def gluon_groups(rows: int, num_experts: int, n: int, k: int, swiglu: bool = False) -> int:
    """Scale groups (of 128 inputs) per stage of the Gluon kernel's ring, with the tiles
    gluon_tiles / gluon_swiglu_tiles give (their stages hold this many groups each)."""
    grouped = _grouped_tiles(rows, num_experts, n, k, swiglu)
    return grouped[-1] if grouped else 1


def _grouped_tiles(rows: int, num_experts: int, n: int, k: int, swiglu: bool = False):
    """_grouped_rule's tiles where K holds whole stages of their groups, else None."""
    tiles = _grouped_rule(rows, num_experts, n, k, swiglu)
    return tiles if tiles and k % (GLUON_GROUP * tiles[-1]) == 0 else None


def _grouped_rule(rows: int, num_experts: int, n: int, k: int, swiglu: bool):
    """Where stages of 2 or 4 scale groups won: (block_m, block_n, stages, maxnreg, ctas_per_sm,
    groups) for the GEMM or the fused fc1 + SwiGLU; else None. A stage of several groups takes
    its words and its x as one box each, so per input the kernel waits on fewer barriers and
    issues fewer copies, each behind a CTA barrier. That pays where those refills, not the
    unpack, fill the issue slots: at few tokens per expert. Round 17 measured one to three
    tokens per call, W13 at E128 to 4 tokens per expert, W13 at EP8 to 24, and TP2 at M=16 and
    64. With their own tiles: W13 at E128 and TP2 from 5 tokens per expert (round 18), and W2
    at EP8 to 16, in a ring of three that holds all of K=768 (round 19). It does not pay with
    64-token tiles, whose x fills most of a stage, or in the E128 fused fc1. Each bound is
    where a routing lost (docs/kernel_rounds.md, rounds 17-20)."""
    per_expert = rows // max(1, num_experts)
    few_rows = _few_rows(num_experts, n, k)
    if swiglu:
        if rows < 32:
            return 8, 64, 3, None, None, 2
        if num_experts >= 64 and k >= 2048 and 5 <= per_expert <= (10 if few_rows else 12):
            return 16, 64, 2, None, 2, 4  # W13 at E128 and TP2 (round 18)
        if few_rows and num_experts >= 64:  # TP2
            return (8, 64, 3, None, PERSISTENT_CTAS_PER_SM, 2) if per_expert == 4 else None
        if not few_rows:
            return None
        if per_expert < 8:  # W13 at EP8
            return 8, 64, 2, None, None, 4
        if per_expert == 8:
            return 8, 64, 3, None, None, 2
        return (32, 64, 3, None, None, 2) if per_expert <= 24 else None
    if rows < 32:  # one to three tokens
        four = k % (4 * GLUON_GROUP) == 0
        return (8, 64, 2, None, None, 4) if four else (8, 64, 3, None, None, 2)
    if k < 2048:  # W2 at EP8 up to 16 tokens per expert: the whole K in a ring of three
        if num_experts < 64 and per_expert <= 16:
            return 16 if per_expert <= 8 else 32, 128, 3, None, None, 2
        return None
    if num_experts >= 64 and 5 <= per_expert <= 20:  # W13 at E128 and TP2 (round 18)
        if per_expert <= (12 if few_rows else 11):
            return 16, 64, 2, None, PERSISTENT_CTAS_PER_SM, 4
        if per_expert <= 18 or not few_rows:
            return 32, 128, 2, None, None, 2
    if not few_rows:  # W13 at E128
        return (8, 64, 2, None, PERSISTENT_CTAS_PER_SM, 4) if per_expert <= 4 else None
    if num_experts >= 64:  # TP2
        if per_expert == 1:
            return 8, 64, 2, None, FEW_ROWS_CTAS_PER_SM, 4
        return (8, 64, 2, None, PERSISTENT_CTAS_PER_SM, 4) if 3 <= per_expert <= 4 else None
    if per_expert <= 8:  # W13 at EP8
        return 16, 64, 2, None, None, 4
    if per_expert <= 24:  # with a tail from 13 (gluon_tail, round 20): two stages fit it
        return 32, 64, 3 if per_expert <= 12 else 2, None, None, 2
    return None


#: token rows a call up to which the fused fc1 may split K (gluon_split_k)
SPLIT_MAX_ROWS = 32


def gluon_split_k(rows: int, num_experts: int, n: int, k: int, swiglu: bool = False) -> int:
    """K slices (split_k.py) of a fused fc1 + SwiGLU Gluon call of at most SPLIT_MAX_ROWS token
    rows at K >= 2048, in stages of two groups (gluon_launch). Such a call's grid is at most
    min(rows, E) tiles of 64 output columns, each walking all of K with gate and up
    accumulators. H100, medians of 4 routings (round 35): four slices while that bound is at
    most 96 programs, 1.08-1.41x (M = 1 at E128, TP2 and EP8, TP2 at M = 2, EP8's decode batch
    at M = 8); two up to 192 at E >= 64, 1.03-1.13x (E128 at M = 2, TP2 at M = 3-4). EP8 with
    9-32 rows gained 1.02-1.09x or lost 0.96-0.98x by routing, and E128 from 24 rows lost. The
    plain GEMM, with half the work a program, does not split: EP8 lost 0.93x at M = 1 and
    gained 1.03x in the decode batch at M = 8."""
    if not swiglu or rows > SPLIT_MAX_ROWS or k < 2048:
        return 1
    programs = min(rows, num_experts) * triton.cdiv(n // 2, 64)
    if programs <= 96:
        return 4
    return 2 if programs <= 192 and num_experts >= 64 else 1


#: rows per expert up to which EP8's one-tile-a-program grids release the next kernel early
RELEASE_ROWS_PER_EXPERT = 64


def gluon_release(rows: int, num_experts: int, ctas_per_sm: int = None) -> bool:
    """Whether the Gluon kernel lets the next kernel (launched with PDL) in once each program
    has issued its last load, so the next one's CTAs come in over this one's drain rather than
    after it. At EP8 up to 64 rows per expert, one tile a program, 1.01-1.08x (round 19). In
    TP2's grid of 5 programs an SM under 2 tokens per expert, 1.01-1.03x from 32 rows (round
    22; one loss, 0.99x at 48). With tiles of which four to six fit an SM, and in the other
    persistent grids, the early CTAs slowed this kernel by 3-10%. At E128, at TP2 from 2
    tokens per expert and from 64 rows per expert it tied."""
    if ctas_per_sm == FEW_ROWS_CTAS_PER_SM:
        return rows >= 32
    return (num_experts < 64 and not ctas_per_sm and rows >= 32
            and rows <= RELEASE_ROWS_PER_EXPERT * num_experts)


def gluon_early_words(rows: int, num_experts: int, k: int, tiles: tuple, tail: int = 0) -> bool:
    """Whether a program of the Gluon kernel with these tiles (and tail, gluon_tail) asks for
    the first stages' words before it waits for the previous kernel. It asks for the tile it
    would take if every expert had one row tile, and asks again where that guess was wrong.
    Taken in grids of one tile a program where the guess mostly holds (tiles, tail counted, of
    at least twice an expert's mean rows) and the grid is released early (gluon_release): W13
    at EP8, 1.02-1.11x (rounds
    19-20). W2, whose ring holds all of K, lost. The kernel launched just before must not write
    the weights: decode graphs, where the Gluon kernel runs at EP8, hold no weight refresh."""
    block_m, ctas_per_sm = tiles[0], tiles[4]
    return (not ctas_per_sm and gluon_release(rows, num_experts, ctas_per_sm) and k >= 2048
            and rows <= num_experts * (block_m + tail) // 2)


def gluon_refill_first(tiles: tuple, groups: int) -> bool:
    """Whether each K step of the Gluon kernel refills the previous step's stage before it waits
    for its own (w4a16_gluon's refill_first): stages of several groups retire their wgmmas
    within them, so that stage is already free. 1.03-1.07x in grids of one tile a program with
    64-row weight tiles (round 20). It lost in persistent grids and with 128-row tiles."""
    return groups > 1 and tiles[1] == 64 and not tiles[4]


def gluon_stage_acc(shape: tuple, tiles: tuple) -> bool:
    """Whether fc2's prob epilogue moves the fp32 accumulator to the store layout before the
    prob (w4a16_gluon's stage_acc): on 64 x 128 tiles of 2 stages where each expert fills two
    row tiles, which the rules launch for W2 at EP8 at 128 rows an expert (M = 256): 25.1 ->
    20.6 us (forced at 144 rows, past the Gluon kernel's range, 26.6 -> 23.6; at E128's 64
    rows 103.8 -> 90.7, a tile the rules do not launch there). At 96 and 112 rows an expert
    0.5-0.7 us slower, as on the other tiles (round 62)."""
    rows, num_experts = shape[:2]
    return tiles[:3] == (64, 128, 2) and rows >= 128 * num_experts


#: rows (tokens x top-k) up to which the Gluon kernel is launched with PDL: decode batches
GLUON_PDL_MAX_ROWS = 2048


def gluon_pdl(rows: int) -> bool:
    """Whether the Gluon kernel is launched with programmatic dependent launch, so its launch
    overlaps the previous kernel's drain: up to 256 tokens of top-8 it saves up to 0.4 us a
    call (round 15). At 1024 tokens W13 E128 lost 5%."""
    return rows <= GLUON_PDL_MAX_ROWS


def gluon_walk(shape: tuple, tiles: tuple, x_rows: int, swiglu: bool = False):
    """The grid cap (max_programs) of a Gluon call whose x a fixed-size exchange padded past
    shape's rows (routing's expected rows), or None for one tile a program over x's bound.
    W2 at EP8 (K < 2048) walks a grid capped at twice the expected rows' bound: 1.00-1.10x of
    the call on exact rows, where the full bound's programs that find no rows cost 1.08-1.21x
    (H100, session 28). W13 lost walking (1.15-1.41x): its one-tile grids need early words
    and refills first, which persistent grids do without."""
    rows, num_experts, n, k = shape
    if tiles[4] or k >= 2048 or x_rows <= rows:
        return None
    row_tiles, walk = row_tile_grid(x_rows, rows, num_experts, tiles[0])
    return triton.cdiv(n // 2 if swiglu else n, tiles[1]) * row_tiles if walk else None


def gluon_launch(shape: tuple, tiles: tuple, swiglu: bool = False, x_rows: int = None) -> dict:
    """The Gluon kernel's launch options besides its tiles for a grouped call of shape (rows,
    experts, n, k): x by cp.async, tail, groups a stage (two where K is split), PDL, release,
    early words, refills first, K slices, the prob epilogue's staging and, for x of x_rows
    padded past those rows, the grid's cap, as this file's rules give them."""
    rows, num_experts, _, k = shape
    tail, groups = gluon_tail(*shape, swiglu=swiglu), gluon_groups(*shape, swiglu=swiglu)
    release = gluon_release(rows, num_experts, tiles[4])
    max_programs = gluon_walk(shape, tiles, x_rows or rows, swiglu)
    walks = max_programs is not None
    split_k = 1 if walks or tiles[4] or tail else gluon_split_k(*shape, swiglu=swiglu)
    groups = 2 if split_k > 1 else groups
    return dict(swiglu=swiglu, x_async=gluon_x_async(*shape, swiglu=swiglu), tail=tail,
                groups=groups, pdl=gluon_pdl(rows), release=release,
                early_words=(not walks and split_k == 1
                             and gluon_early_words(rows, num_experts, k, tiles, tail)),
                refill_first=not walks and gluon_refill_first(tiles, groups),
                max_programs=max_programs, split_k=split_k,
                stage_acc=gluon_stage_acc(shape, tiles))
