"""The stream-only floor of a W4A16 decode call, for the benchmark: the time a Hopper kernel
takes to do nothing but bring a call's int4 weight words into shared memory with the Gluon
kernel's TMA boxes (BLOCK_N rows x one 128-input group), one CTA per row tile. No W4A16 kernel
that reads those bytes that way can be faster, so a decode row's time over this floor is what
its unpack, MMAs and pipeline cost (docs/kernel_rounds.md, round 10).

It is the floor with calls overlapped as far as programmatic dependent launch allows: a CTA
asks for its whole row tile (up to MAX_STAGES boxes, all of K for the Qwen3 shapes) before it
waits for the previous call, and lets the next call in once its last box is asked for. Waiting
first with a ring of 4 boxes, as the floor did to round 21, took 1.12-1.15x as long at EP8
(round 22: W2 EP8 64% of copy bandwidth against 73%, W13 EP8 78% against 87%).

Gluon has no interpreter: CI compiles the kernel for sm_90 offline, the H100 runs it."""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from .gluon_hopper import allow_next_grid, cta_barrier, tma_load, wait_for_previous_grid
from .w4a16_gluon import STAGE_WORDS, _WORD_LAYOUT

BLOCK_N = 64  # the best of 64/128-row boxes in round 10
MAX_STAGES = 17  # 16 boxes ahead: W13's K=2048 whole, 68 KB, 3 CTAs an SM


@gluon.jit
def _issue(desc, bufs, bars, tile, kb):
    """Fill stage kb % STAGE_COUNT with block kb of the tile's rows."""
    BN: gl.constexpr = desc.block_type.shape[0]
    STAGE_COUNT: gl.constexpr = bufs.shape[0]
    bar = bars.index(kb % STAGE_COUNT)
    mbarrier.expect(bar, desc.block_type.nbytes)
    tma_load(desc, [tile * BN, kb * desc.block_type.shape[1]], bar, bufs.index(kb % STAGE_COUNT))


@gluon.jit(do_not_specialize=["k_blocks"])
def _stream_kernel(desc, out_ptr, k_blocks, STAGE_COUNT: gl.constexpr, num_warps: gl.constexpr):
    """Each stage is read into registers (as the W4A16 kernel reads its words) and folded into
    one word per CTA, so nothing is optimized away."""
    BN: gl.constexpr = desc.block_type.shape[0]
    WORDS: gl.constexpr = desc.block_type.shape[1]
    tile = gl.program_id(0)
    bufs = gl.allocate_shared_memory(gl.int32, [STAGE_COUNT, BN, WORDS], desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGE_COUNT, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGE_COUNT):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(STAGE_COUNT - 1):  # weights: no kernel before this one writes them
        if i < k_blocks:
            _issue(desc, bufs, bars, tile, i)
    if k_blocks < STAGE_COUNT:
        allow_next_grid()
    wait_for_previous_grid()  # launched with PDL: the previous call may still write out
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [32 * 4 // WORDS, WORDS // 4], [num_warps, 1],
                                            [1, 0])
    acc = gl.zeros([BN, WORDS], gl.int32, layout)
    for kb in range(k_blocks):
        mbarrier.wait(bars.index(kb % STAGE_COUNT), (kb // STAGE_COUNT) & 1)
        acc = acc ^ bufs.index(kb % STAGE_COUNT).load(layout)
        cta_barrier()  # every warp is done with the stage refilled next
        if kb + STAGE_COUNT - 1 < k_blocks:
            _issue(desc, bufs, bars, tile, kb + STAGE_COUNT - 1)
            if kb + STAGE_COUNT == k_blocks:
                allow_next_grid()
    gl.store(out_ptr + tile, gl.sum(gl.sum(acc, 1), 0))
    for i in gl.static_range(STAGE_COUNT):
        mbarrier.invalidate(bars.index(i))


def stages_for(k_blocks: int) -> int:
    """Ring stages for a row tile of k_blocks boxes: all of them ahead where they fit."""
    return min(k_blocks + 1, MAX_STAGES)


def stream_words(words: torch.Tensor, out: torch.Tensor) -> None:
    """Stream int32 words [rows, K/8] (rows a multiple of BLOCK_N; K/8 of STAGE_WORDS) into
    shared memory; out: int32 [rows / BLOCK_N] on the same device."""
    rows, width = words.shape
    if rows % BLOCK_N or width % STAGE_WORDS:
        raise ValueError(f"stream_words: words {tuple(words.shape)} must be [a multiple of "
                         f"{BLOCK_N}, a multiple of {STAGE_WORDS}]")
    desc = TensorDescriptor.from_tensor(words, [BLOCK_N, STAGE_WORDS], _WORD_LAYOUT)
    k_blocks = width // STAGE_WORDS
    _stream_kernel[(rows // BLOCK_N, )](desc, out, k_blocks, STAGE_COUNT=stages_for(k_blocks),
                                        num_warps=4, launch_pdl=True)
