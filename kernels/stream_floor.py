"""The stream-only floor of a W4A16 decode call, for the benchmark: the time a Hopper kernel
takes to do nothing but bring a call's int4 weight words into shared memory with the Gluon
kernel's TMA boxes (BLOCK_N rows x one 128-input group) through a ring, one CTA per row tile.
No W4A16 kernel that reads those bytes that way can be faster, so a decode row's time over
this floor is what its unpack, MMAs and pipeline cost (docs/benchmarks.md, round 10).

Gluon has no interpreter: CI compiles the kernel for sm_90 offline, the H100 runs it."""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

from .gluon_hopper import cta_barrier, tma_load, wait_for_previous_grid
from .w4a16_gluon import STAGE_WORDS, _WORD_LAYOUT, _descriptor

BLOCK_N, STAGES = 64, 4  # the best of 64/128-row boxes and 2-8 stages in round 10


@gluon.jit
def _issue(desc, bufs, bars, tile, kb):
    """Fill stage kb % STAGES with block kb of the tile's rows."""
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
    wait_for_previous_grid()  # launched with PDL, as the W4A16 kernel is
    tile = gl.program_id(0)
    bufs = gl.allocate_shared_memory(gl.int32, [STAGE_COUNT, BN, WORDS], desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGE_COUNT, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGE_COUNT):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(STAGE_COUNT - 1):
        if i < k_blocks:
            _issue(desc, bufs, bars, tile, i)
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [32 * 4 // WORDS, WORDS // 4], [num_warps, 1],
                                            [1, 0])
    acc = gl.zeros([BN, WORDS], gl.int32, layout)
    for kb in range(k_blocks):
        mbarrier.wait(bars.index(kb % STAGE_COUNT), (kb // STAGE_COUNT) & 1)
        acc = acc ^ bufs.index(kb % STAGE_COUNT).load(layout)
        cta_barrier()  # every warp is done with the stage refilled next
        if kb + STAGE_COUNT - 1 < k_blocks:
            _issue(desc, bufs, bars, tile, kb + STAGE_COUNT - 1)
    gl.store(out_ptr + tile, gl.sum(gl.sum(acc, 1), 0))


def stream_words(words: torch.Tensor, out: torch.Tensor) -> None:
    """Stream int32 words [rows, K/8] (rows a multiple of BLOCK_N; K/8 of STAGE_WORDS) into
    shared memory; out: int32 [rows / BLOCK_N] on the same device."""
    rows, width = words.shape
    if rows % BLOCK_N or width % STAGE_WORDS:
        raise ValueError(f"stream_words: words {tuple(words.shape)} must be [a multiple of "
                         f"{BLOCK_N}, a multiple of {STAGE_WORDS}]")
    desc = _descriptor(words, [BLOCK_N, STAGE_WORDS], _WORD_LAYOUT)
    _stream_kernel[(rows // BLOCK_N, )](desc, out, width // STAGE_WORDS, STAGE_COUNT=STAGES,
                                        num_warps=4, launch_pdl=True)
