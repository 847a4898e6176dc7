"""How close can any kernel that reads a decode call's int4 words come to the copy ceiling, when
consecutive calls overlap as PDL allows? Stream-only kernels (words into shared memory by TMA,
folded so nothing is optimized away), graphs of 10 calls, weights rotated over copies > 2x L2:
  floor   : kernels/stream_floor.py as committed (PDL wait first, a ring of 4, implicit release)
  early   : the first STAGES - 1 boxes asked for before the PDL wait, release once the last is issued
  all-K   : every box of the row tile asked for before the PDL wait (the whole K in shared
            memory), release at once
  copy    : torch copy of the same bytes (read + write counted as the bytes read, as the
            benchmark's plain-copy figure)"""
import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from qarl_kernels.gluon_hopper import allow_next_grid, cta_barrier, tma_load, wait_for_previous_grid
from qarl_kernels.stream_floor import stream_words, BLOCK_N
from qarl_kernels.w4a16_gluon import STAGE_WORDS, _WORD_LAYOUT, _descriptor
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, ceilings


@gluon.jit
def _issue(desc, bufs, bars, tile, kb):
    BN: gl.constexpr = desc.block_type.shape[0]
    S: gl.constexpr = bufs.shape[0]
    bar = bars.index(kb % S)
    mbarrier.expect(bar, desc.block_type.nbytes)
    tma_load(desc, [tile * BN, kb * desc.block_type.shape[1]], bar, bufs.index(kb % S))


@gluon.jit(do_not_specialize=["k_blocks"])
def _kernel(desc, out_ptr, k_blocks, S: gl.constexpr, EARLY: gl.constexpr, num_warps: gl.constexpr):
    BN: gl.constexpr = desc.block_type.shape[0]
    WORDS: gl.constexpr = desc.block_type.shape[1]
    tile = gl.program_id(0)
    bufs = gl.allocate_shared_memory(gl.int32, [S, BN, WORDS], desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [S, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(S):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(S - 1):
        if i < k_blocks:
            _issue(desc, bufs, bars, tile, i)
    if k_blocks <= S - 1:
        allow_next_grid()
    wait_for_previous_grid()
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [32 * 4 // WORDS, WORDS // 4], [num_warps, 1], [1, 0])
    acc = gl.zeros([BN, WORDS], gl.int32, layout)
    for kb in range(k_blocks):
        mbarrier.wait(bars.index(kb % S), (kb // S) & 1)
        acc = acc ^ bufs.index(kb % S).load(layout)
        cta_barrier()
        if kb + S - 1 < k_blocks:
            _issue(desc, bufs, bars, tile, kb + S - 1)
            if kb + S - 1 == k_blocks - 1:
                allow_next_grid()
    gl.store(out_ptr + tile, gl.sum(gl.sum(acc, 1), 0))
    for i in gl.static_range(S):
        mbarrier.invalidate(bars.index(i))


def run(words, out, stages):
    rows, width = words.shape
    desc = _descriptor(words, [BLOCK_N, STAGE_WORDS], _WORD_LAYOUT)
    _kernel[(rows // BLOCK_N, )](desc, out, width // STAGE_WORDS, S=stages, EARLY=True,
                                 num_warps=4, launch_pdl=True)


peak = ceilings()["copy_GBps"]
print(f"copy ceiling {peak:.0f} GB/s")
for label, experts, n, k in [("W2 EP8 (16 experts)", 16, 2048, 768), ("W13 EP8 (16 experts)", 16, 1536, 2048),
                             ("W13 EP8, 7 experts (M=8 decode batch)", 7, 1536, 2048),
                             ("W2 E128, 123 experts", 123, 2048, 768)]:
    nbytes = experts * n * k // 2
    words = [torch.randint(-2**31, 2**31 - 1, (experts * n, k // 8), dtype=torch.int32, device="cuda")
             for _ in range(copies_for(nbytes))]
    out = torch.empty(experts * n // BLOCK_N, dtype=torch.int32, device="cuda")
    blocks = k // 128
    res = {}
    ref = None
    for name, fn in [("floor", lambda w: stream_words(w, out)),
                     ("early, ring of 4", lambda w: run(w, out, 4)),
                     ("all-K before the wait", lambda w: run(w, out, blocks + 1))]:
        fn(words[0]); torch.cuda.synchronize()
        got = out.clone()
        if ref is None:
            ref = got
        assert torch.equal(got, ref), name
        res[name] = graph_us([lambda w=w: fn(w) for w in words], calls=STEP_CALLS)
    dst = [torch.empty_like(w) for w in words]
    res["torch copy"] = graph_us([lambda w=w, d=d: d.copy_(w) for w, d in zip(words, dst)], calls=STEP_CALLS)
    print(f"{label}: {nbytes / 1e6:.1f} MB | " + " | ".join(
        f"{nm} {t:.2f} us {nbytes / t / 1e3 / peak * 100:.1f}%" for nm, t in res.items()), flush=True)
    del words, dst
