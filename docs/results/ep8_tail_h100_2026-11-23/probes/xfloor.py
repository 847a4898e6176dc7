"""Stream floor with x: each CTA (a 64-row weight tile of expert pid // 24) streams its words
as stream_floor does AND an x box of R token rows per 128-input block, as the W4A16 kernel
does. How much do the x reloads from L2 cost at EP8 W13 (16 experts x 24 tiles)?"""
import os, torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from qarl_kernels.gluon_hopper import cta_barrier, tma_load, wait_for_previous_grid
from qarl_kernels.w4a16_gluon import _WORD_LAYOUT, _descriptor, x_descriptor
from qarl_kernels.bench_setup import graph_us, STEP_CALLS

@gluon.jit
def _issue(desc, xdesc, bufs, xbufs, bars, tile, kb, x_row, WITH_X: gl.constexpr):
    BN: gl.constexpr = desc.block_type.shape[0]
    S: gl.constexpr = bufs.shape[0]
    bar = bars.index(kb % S)
    if WITH_X:
        mbarrier.expect(bar, desc.block_type.nbytes + xdesc.block_type.nbytes)
    else:
        mbarrier.expect(bar, desc.block_type.nbytes)
    tma_load(desc, [tile * BN, kb * desc.block_type.shape[1]], bar, bufs.index(kb % S))
    if WITH_X:
        tma_load(xdesc, [kb * 2, x_row, 0], bar, xbufs.index(kb % S))

@gluon.jit(do_not_specialize=["k_blocks", "rows_per_expert"])
def _kernel(desc, xdesc, out_ptr, k_blocks, rows_per_expert, S: gl.constexpr,
            WITH_X: gl.constexpr, num_warps: gl.constexpr):
    BN: gl.constexpr = desc.block_type.shape[0]
    WORDS: gl.constexpr = desc.block_type.shape[1]
    wait_for_previous_grid()
    tile = gl.program_id(0)
    x_row = (tile // 24) * rows_per_expert
    bufs = gl.allocate_shared_memory(gl.int32, [S, BN, WORDS], desc.layout)
    XR: gl.constexpr = xdesc.block_type.shape[1]
    xbufs = gl.allocate_shared_memory(gl.bfloat16, [S, 2, XR, 64], xdesc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [S, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(S):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(S - 1):
        _issue(desc, xdesc, bufs, xbufs, bars, tile, i, x_row, WITH_X)
    layout: gl.constexpr = gl.BlockedLayout([1, 4], [32 * 4 // WORDS, WORDS // 4], [num_warps, 1], [1, 0])
    acc = gl.zeros([BN, WORDS], gl.int32, layout)
    for kb in range(k_blocks):
        mbarrier.wait(bars.index(kb % S), (kb // S) & 1)
        acc = acc ^ bufs.index(kb % S).load(layout)
        cta_barrier()
        if kb + S - 1 < k_blocks:
            _issue(desc, xdesc, bufs, xbufs, bars, tile, kb + S - 1, x_row, WITH_X)
    gl.store(out_ptr + tile, gl.sum(gl.sum(acc, 1), 0))
    for i in gl.static_range(S):
        mbarrier.invalidate(bars.index(i))

E, N, K = 16, 1536, 2048
torch.manual_seed(0)
copies = 4
words = [torch.randint(-2**31, 2**31 - 1, (E * N, K // 8), dtype=torch.int32, device="cuda")
         for _ in range(copies)]
out = torch.empty(E * N // 64, dtype=torch.int32, device="cuda")
for rpe, label in ((32, "DP M=64 (32 rows/expert)"), (16, "TP-attn M=256 (16 rows/expert)")):
    x = torch.randn(E * rpe + 128, K, dtype=torch.bfloat16, device="cuda")
    print("==", label, flush=True)
    for S in (3, 4):
        for R in (0, 32, 64, 128):
            xd = x_descriptor(x, R or 16, 1)
            fns = [lambda w=w, xd=xd: _kernel[(E * N // 64,)](
                _descriptor(w, [64, 16], _WORD_LAYOUT), xd, out, K // 128, rpe, S=S,
                WITH_X=R > 0, num_warps=4, launch_pdl=True) for w in words]
            us = graph_us(fns, calls=STEP_CALLS)
            wb = E * N * K / 2
            xb = E * 24 * (K // 128) * R * 256
            print(f"  stages {S} x rows {R:3d}: {us:6.2f} us  words {wb/us/1e3:6.0f} GB/s"
                  f" ({wb/us/1e3/3000*100:4.1f}% of 3.0 TB/s)  x from L2 {xb/us/1e3:6.0f} GB/s",
                  flush=True)
