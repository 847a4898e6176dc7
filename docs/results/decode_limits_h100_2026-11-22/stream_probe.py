"""How fast can TMA stream the EP8 expert words through shared memory with the Gluon kernel's
grid, boxes and ring, doing nothing else (read the stage into registers, xor it)? Variants:
grid per tile vs persistent, stages, box, and a pre-tiled (contiguous box) layout."""
import sys
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from qarl_kernels.gluon_hopper import tma_load, cta_barrier
from qarl_kernels.bench_setup import graph_us, copies_for, ceilings

LAYOUT = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=32, rank=2)


@gluon.jit
def _issue(desc, bufs, bars, g, pid, G, KB: gl.constexpr, TILED: gl.constexpr):
    BN: gl.constexpr = desc.block_type.shape[0]
    BW: gl.constexpr = desc.block_type.shape[1]
    STAGES: gl.constexpr = bufs.shape[0]
    s = g % STAGES
    tile = pid + (g // KB) * G
    kb = g % KB
    bar = bars.index(s)
    mbarrier.expect(bar, desc.block_type.nbytes)
    if TILED:
        tma_load(desc, [(tile * KB + kb) * BN, 0], bar, bufs.index(s))
    else:
        tma_load(desc, [tile * BN, kb * BW], bar, bufs.index(s))


@gluon.jit
def stream_kernel(desc, out_ptr, n_tiles, counts_ptr, KB: gl.constexpr, STAGES: gl.constexpr,
                  TILED: gl.constexpr, TABLES: gl.constexpr, num_warps: gl.constexpr):
    BN: gl.constexpr = desc.block_type.shape[0]
    BW: gl.constexpr = desc.block_type.shape[1]
    pid = gl.program_id(0)
    G = gl.num_programs(0)
    bufs = gl.allocate_shared_memory(gl.int32, [STAGES, BN, BW], desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    lay: gl.constexpr = gl.BlockedLayout([1, 4], [32 * 4 // BW, BW // 4], [num_warps, 1], [1, 0])
    start = pid
    if TABLES:  # the real kernel's dependency: counts loaded before the first TMA
        idx = gl.arange(0, 16, gl.BlockedLayout([1], [32], [num_warps], [0]))
        c = gl.load(counts_ptr + idx)
        start = pid + gl.sum(c, 0) * 0
    my_tiles = (n_tiles - start + G - 1) // G
    total = my_tiles * KB
    for i in gl.static_range(STAGES - 1):
        if i < total:
            _issue(desc, bufs, bars, i, start, G, KB, TILED)
    acc = gl.zeros([BN, BW], gl.int32, lay)
    for g in range(total):
        s = g % STAGES
        mbarrier.wait(bars.index(s), (g // STAGES) & 1)
        acc = acc ^ bufs.index(s).load(lay)
        cta_barrier()
        if g + STAGES - 1 < total:
            _issue(desc, bufs, bars, g + STAGES - 1, start, G, KB, TILED)
    r = gl.sum(gl.sum(acc, 1), 0)
    gl.store(out_ptr + pid, r)


def run(name, E, N, K, BN, BW, stages, grid_kind, tiled, tables, ceil):
    words = K // 8
    nbytes = E * N * words * 4
    copies = copies_for(nbytes)
    ws = [torch.randint(-2**31, 2**31 - 1, (E * N, words), dtype=torch.int32, device="cuda")
          for _ in range(copies)]
    KB = words // BW
    n_tiles = E * N // BN
    descs = []
    for w in ws:
        t = w.view(E * N // BN, BN, KB, BW).permute(0, 2, 1, 3).contiguous().view(-1, BW) if tiled else w
        descs.append(TensorDescriptor.from_tensor(t, [BN, BW], LAYOUT))
    grid = n_tiles if grid_kind == "tile" else 132 * grid_kind
    out = torch.empty(grid, dtype=torch.int32, device="cuda")
    counts = torch.full((16,), 32, dtype=torch.int32, device="cuda")
    fns = [lambda d=d: stream_kernel[(grid,)](d, out, n_tiles, counts, KB=KB, STAGES=stages,
                                              TILED=tiled, TABLES=tables, num_warps=4)
           for d in descs]
    t = graph_us(fns)
    print(f"{name} box {BN}x{BW * 4}B st{stages} grid {grid_kind} tiled {int(tiled)} tables "
          f"{int(tables)}: {t:6.1f} us {nbytes / t / 1e3:6.0f} GB/s "
          f"({100 * nbytes / t / 1e3 / ceil:4.1f}% of copy)", flush=True)
    del ws, descs


def main():
    c = ceilings()
    ceil = c["copy_GBps"]
    print(f"copy {ceil:.0f} GB/s", flush=True)
    z = torch.zeros(1, device="cuda")
    print(f"floor {graph_us([lambda: z.add_(1)]):.1f} us", flush=True)
    for name, E, N, K in (("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)):
        # the real kernel's grid and boxes
        for st in (2, 3, 4, 6, 8):
            run(name, E, N, K, 64, 16, st, "tile", False, False, ceil)
        run(name, E, N, K, 64, 16, 3, "tile", False, True, ceil)
        run(name, E, N, K, 128, 16, 3, "tile", False, False, ceil)
        run(name, E, N, K, 64, 32, 3, "tile", False, False, ceil)
        run(name, E, N, K, 64, 32, 4, "tile", False, False, ceil)
        for st in (3, 6):
            run(name, E, N, K, 64, 16, st, "tile", True, False, ceil)
        for g in (1, 2, 3, 4):
            for st in (4, 8):
                run(name, E, N, K, 64, 16, st, g, False, False, ceil)
        for g in (2, 3):
            run(name, E, N, K, 64, 32, 6, g, False, False, ceil)
            run(name, E, N, K, 64, 16, 8, g, True, False, ceil)


if __name__ == "__main__":
    main()
