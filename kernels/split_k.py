"""K split over programs for decode-size GEMMs of one weight, summed in a fixed order.

Why: a dense decode call (attention's projections, a few tokens) has few output tiles: at
16 x 32 tiles Qwen3-30B-A3B's o_proj (2048 x 4096) gives 64 programs for 132 SMs, each walking
all of K, and the call is latency-bound (INT8 at 8 tokens: 0.67x bf16, docs/benchmarks.md).
Splitting K gives more programs a shorter walk. Atomic adds would sum the slices in arrival
order; here each program writes its partial tile, and the last program of a tile to arrive
(a counter per tile) adds the slices in slice order and runs the epilogue. So the result does
not depend on timing: exact for INT8's int32 sums, deterministic for fp32 ones. One launch,
no memset: the last program resets its counter, so the counters stay zero between calls.

The counters are a ring per device, zeroed once, made outside CUDA-graph capture (the
engine's warm-up step calls first; while capturing, a call that finds none does not split).
Each call takes the next free stretch of the ring, so calls that overlap in time on two streams
count on different counters unless some thousands of tiles were split in between; a graph
keeps the stretch it captured, which calls made later on its stream reuse only after it.
"""
from typing import Dict, List, Optional, Tuple

import torch
import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .gluon_hopper import cta_barrier, sm_count
from .numerics import scaled, to_bf16

#: counters per device (64 KiB); one call may split at most a quarter of them
RING_TILES = 16384
MAX_TILES = RING_TILES // 4

_rings: Dict[torch.device, List] = {}  # device -> [counters, next free]


def split_ring(device: torch.device) -> Optional[List]:
    """The device's [counters, next free], made by the first call outside CUDA-graph capture;
    None while capturing before any (a capture would only record the zeroing)."""
    ring = _rings.get(device)
    if ring is None:
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            return None
        ring = _rings[device] = [torch.zeros(RING_TILES, dtype=torch.int32, device=device), 0]
    return ring


def split_counters(device: torch.device, tiles: int) -> Optional[torch.Tensor]:
    """Zeroed int32 counters for `tiles` output tiles, or None where the call must not split
    (too many tiles, or capturing before any call on this device made the ring)."""
    ring = split_ring(device) if tiles <= MAX_TILES else None
    if ring is None:
        return None
    start = ring[1] if ring[1] + tiles <= RING_TILES else 0
    ring[1] = start + tiles
    return ring[0][start:start + tiles]


def split_buffers(split_k: int, tiles: int, tile_elems: int, dtype: torch.dtype,
                  unused: torch.Tensor) -> Tuple[int, torch.Tensor, torch.Tensor]:
    """(split_k, partials, counters) for a call of `tiles` output tiles of `tile_elems`
    accumulators; (1, unused, unused) where the call must not split (split_counters)."""
    counters = split_counters(unused.device, tiles) if split_k > 1 else None
    if counters is None:
        return 1, unused, unused
    return split_k, torch.empty(tiles * split_k * tile_elems, dtype=dtype,
                                device=unused.device), counters


def split_for(programs: int, k_steps: int, device: torch.device, waves: int = 2,
              max_split: int = 8, min_steps: int = 2) -> int:
    """Slices of K (a power of two) for a call of `programs` output tiles: doubled while the
    programs fit in `waves` waves and each slice keeps `min_steps` K steps. 1 off CUDA."""
    if device.type != "cuda":
        return 1
    split = 1
    while (split < max_split and programs * split * 2 <= waves * sm_count(device)
           and k_steps >= 2 * split * min_steps):
        split *= 2
    return split


#: tokens up to which the FP8 and INT8 dense kernels take 16 x 32 tiles, K split while a given
#: number of waves hold the programs (H100 sweep, docs/kernel_rounds.md round 32: five for FP8,
#: four for INT8, each within 2% of the best tiles and split at every shape)
NARROW_ROWS = 32
#: past NARROW_ROWS to DECODE_MAX_ROWS tokens: 64-row tiles, 32 columns wide up to
#: WIDE_COLUMN_ROWS tokens and 64 past, K split while the programs fit DECODE_WAVES waves and
#: each slice walks block_n / 4 K steps or more (a slice's partial tile, written and read back,
#: grows with block_n). H200 sweep of 36 tiles x splits at attention's projections and their
#: TP2 halves, 64-256 tokens (round 56): within 1.04x of each cell's best
DECODE_MAX_ROWS = 256
WIDE_COLUMN_ROWS = 128
DECODE_WAVES = 2


def decode_columns(rows: int) -> int:
    """block_n of decode_tiles' 64-row tiles."""
    return 32 if rows <= WIDE_COLUMN_ROWS else 64


def decode_programs(rows: int, n: int) -> int:
    """Output tiles of decode_tiles' 64-row shape for `rows` tokens and `n` outputs."""
    return triton.cdiv(n, decode_columns(rows)) * triton.cdiv(rows, 64)


def decode_tiles(rows: int, n: int, k_steps: int, device: torch.device,
                 narrow_waves: int, narrow_max_split: int = 8) -> Tuple[int, int, int]:
    """(block_m, block_n, split_k) of a dense FP8 or INT8 call of up to DECODE_MAX_ROWS tokens;
    narrow_waves, narrow_max_split: the waves the 16 x 32 tiles' split fills, and its most
    slices."""
    if rows <= NARROW_ROWS:
        return 16, 32, split_for(triton.cdiv(n, 32) * triton.cdiv(rows, 16), k_steps, device,
                                 waves=narrow_waves, max_split=narrow_max_split, min_steps=4)
    block_n = decode_columns(rows)
    return 64, block_n, split_for(decode_programs(rows, n), k_steps, device,
                                  waves=DECODE_WAVES, min_steps=block_n // 4)


@triton.jit
def k_slice(K, has_rows, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    """[first, end) of the K blocks in this program's slice (axis 2 of the grid); empty where
    the program's tile has no rows (tiles past the last expert do nothing)."""
    per_split = tl.cdiv(tl.cdiv(K, BLOCK_K), SPLIT_K)
    first = tl.program_id(2) * per_split
    return first, tl.where(has_rows, tl.minimum(first + per_split, tl.cdiv(K, BLOCK_K)), first)


@triton.jit
def split_sum(acc, partials_ptr, counters_ptr, tile, split, SPLIT_K: tl.constexpr):
    """(whether this program holds the tile's total, the total): every program stores its
    slice's `acc` [R, C]; the last of the tile's SPLIT_K to arrive adds slices 0..SPLIT_K-1 in
    that order and resets the tile's counter."""
    R: tl.constexpr = acc.shape[0]
    C: tl.constexpr = acc.shape[1]
    index = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    base = partials_ptr + tile.to(tl.int64) * (SPLIT_K * R * C)
    tl.store(base + split * (R * C) + index, acc)
    tl.debug_barrier()  # every thread's slice is written before the arrival is counted
    arrived = tl.atomic_add(counters_ptr + tile, 1, sem="acq_rel", scope="gpu")
    last = arrived == SPLIT_K - 1
    total = acc
    if last:
        total = tl.load(base + index, cache_modifier=".cg")
        for s in tl.static_range(1, SPLIT_K):
            total += tl.load(base + s * (R * C) + index, cache_modifier=".cg")
        tl.atomic_xchg(counters_ptr + tile, 0, sem="relaxed", scope="gpu")
    return last, total


@triton.jit
def store_split(acc, y_ptrs, mask, partials_ptr, counters_ptr, tile, SPLIT_K: tl.constexpr,
                SOFTWARE: tl.constexpr, row_scale, SCALED: tl.constexpr,
                ROUND_FIRST: tl.constexpr):
    """Stores output tile `tile` in bf16 from this program's slice sum `acc`: at once without a
    split, else by the last of the tile's SPLIT_K programs to arrive (split_sum). SCALED: the
    whole sum times row_scale (the rows' router probs, broadcast against acc) as
    numerics.scaled with ROUND_FIRST."""
    if SPLIT_K == 1:
        if SCALED:
            acc = scaled(acc, row_scale, ROUND_FIRST, SOFTWARE)
        tl.store(y_ptrs, to_bf16(acc, SOFTWARE), mask=mask)
    else:
        last, acc = split_sum(acc, partials_ptr, counters_ptr, tile, tl.program_id(2), SPLIT_K)
        if last:
            if SCALED:
                acc = scaled(acc, row_scale, ROUND_FIRST, SOFTWARE)
            tl.store(y_ptrs, to_bf16(acc, SOFTWARE), mask=mask)


@gluon.constexpr_function
def _rows_of_16_bytes(cols, warps):
    """A layout whose threads hold 4 neighbouring fp32 of a row (16-byte accesses)."""
    lanes = min(32, cols // 4)
    return gl.BlockedLayout([1, 4], [32 // lanes, lanes], [warps, 1], [1, 0])


@gluon.jit
def gluon_split_sum(acc, acc_up, partials_ptr, counters_ptr, tile, split,
                    SPLIT_K: gl.constexpr, PARTS: gl.constexpr, num_warps: gl.constexpr):
    """split_sum's protocol, line for line, for a Gluon kernel's accumulator [R, C] and, with
    PARTS = 2, a second one summed with it (a fused fc1's up rows beside its gate rows: the
    SwiGLU takes whole sums). A Gluon kernel calls no @triton.jit function, and split_sum's
    tensors carry no layout. From C = 16 through a layout of 16-byte accesses (a wgmma
    accumulator's threads hold 8 bytes of a row): at 32-64 tokens and 4-8 slices 1.07-1.39x
    faster calls in 15 of 16 cells, at 8-token tiles no gain (H100, round 34)."""
    R: gl.constexpr = acc.shape[0]
    C: gl.constexpr = acc.shape[1]
    if C >= 16:
        acc = gl.convert_layout(acc, _rows_of_16_bytes(C, num_warps))
        acc_up = gl.convert_layout(acc_up, _rows_of_16_bytes(C, num_warps))
    layout: gl.constexpr = acc.type.layout
    index = (gl.expand_dims(gl.arange(0, R, layout=gl.SliceLayout(1, layout)) * C, 1)
             + gl.expand_dims(gl.arange(0, C, layout=gl.SliceLayout(0, layout)), 0))
    base = partials_ptr + tile.to(gl.int64) * (SPLIT_K * PARTS * R * C)
    gl.store(base + split * (PARTS * R * C) + index, acc)
    if PARTS == 2:
        gl.store(base + split * (PARTS * R * C) + R * C + index, acc_up)
    cta_barrier()  # every thread's slice is written before the arrival is counted
    arrived = gl.atomic_add(counters_ptr + tile, 1, sem="acq_rel", scope="gpu")
    last = arrived == SPLIT_K - 1
    total = acc
    total_up = acc_up
    if last:
        total = gl.load(base + index, cache_modifier=".cg")
        for s in gl.static_range(1, SPLIT_K):
            total += gl.load(base + s * (PARTS * R * C) + index, cache_modifier=".cg")
        if PARTS == 2:
            total_up = gl.load(base + R * C + index, cache_modifier=".cg")
            for s in gl.static_range(1, SPLIT_K):
                total_up += gl.load(base + s * (PARTS * R * C) + R * C + index,
                                    cache_modifier=".cg")
        gl.atomic_xchg(counters_ptr + tile, 0, sem="relaxed", scope="gpu")
    return last, total, total_up
