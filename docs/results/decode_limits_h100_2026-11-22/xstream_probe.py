"""Is the TMA request stream the EP8 bound? Stream the W13 EP8 weight words (64-row x 64-byte
boxes) alone, then with each CTA also loading the x tiles the W4A16 kernel loads per block
(two [64 tokens, 64 inputs] bf16 boxes, 128-byte rows, from L2), 10 calls per graph."""
import sys
import torch
sys.path.insert(0, ".gpu")
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from qarl_kernels.gluon_hopper import tma_load, cta_barrier
from qarl_kernels.bench_setup import graph_us, copies_for

WL = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=32, rank=2)


@gluon.jit
def _issue(w_desc, x_desc, wb, xb, bars, tile, kb, x_row, WITH_X: gl.constexpr):
    STAGES: gl.constexpr = wb.shape[0]
    BN: gl.constexpr = w_desc.block_type.shape[0]
    s = kb % STAGES
    bar = bars.index(s)
    if WITH_X:
        mbarrier.expect(bar, w_desc.block_type.nbytes + 2 * x_desc.block_type.nbytes)
    else:
        mbarrier.expect(bar, w_desc.block_type.nbytes)
    tma_load(w_desc, [tile * BN, kb * 16], bar, wb.index(s))
    if WITH_X:
        tma_load(x_desc, [x_row, kb * 128], bar, xb.index(2 * s))
        tma_load(x_desc, [x_row, kb * 128 + 64], bar, xb.index(2 * s + 1))


@gluon.jit
def _kernel(w_desc, x_desc, out_ptr, k_blocks, n_blocks, STAGES: gl.constexpr,
            WITH_X: gl.constexpr, num_warps: gl.constexpr):
    BN: gl.constexpr = w_desc.block_type.shape[0]
    BM: gl.constexpr = x_desc.block_type.shape[0]
    tile = gl.program_id(0)
    x_row = (tile // n_blocks) * BM  # the CTAs of one expert share its x rows
    wb = gl.allocate_shared_memory(gl.int32, [STAGES, BN, 16], w_desc.layout)
    xb = gl.allocate_shared_memory(gl.bfloat16, [2 * STAGES, BM, 64], x_desc.layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    for i in gl.static_range(STAGES - 1):
        _issue(w_desc, x_desc, wb, xb, bars, tile, i, x_row, WITH_X)
    lay: gl.constexpr = gl.BlockedLayout([1, 4], [8, 4], [num_warps, 1], [1, 0])
    acc = gl.zeros([BN, 16], gl.int32, lay)
    for kb in range(k_blocks):
        s = kb % STAGES
        mbarrier.wait(bars.index(s), (kb // STAGES) & 1)
        acc = acc ^ wb.index(s).load(lay)
        cta_barrier()
        if kb + STAGES - 1 < k_blocks:
            _issue(w_desc, x_desc, wb, xb, bars, tile, kb + STAGES - 1, x_row, WITH_X)
    gl.store(out_ptr + tile, gl.sum(gl.sum(acc, 1), 0))


def main():
    e, n, k, bm = 16, 1536, 2048, 64
    words = k // 8
    nbytes = e * n * words * 4
    ws = [torch.randint(-2**31, 2**31 - 1, (e * n, words), dtype=torch.int32, device="cuda")
          for _ in range(copies_for(nbytes))]
    x = torch.randn(e * bm, k, device="cuda", dtype=torch.bfloat16)  # 2 MB: stays in L2
    xl = gl.NVMMASharedLayout.get_default_for([bm, 64], gl.bfloat16)
    x_desc = TensorDescriptor.from_tensor(x, [bm, 64], xl)
    out = torch.empty(e * n // 64, dtype=torch.int32, device="cuda")
    for bn in (64, 128):
        descs = [TensorDescriptor.from_tensor(w, [bn, 16], WL) for w in ws]
        grid = e * n // bn
        for with_x in (False, True):
            for st in (3, 4):
                t = graph_us([lambda d=d: _kernel[(grid, )](d, x_desc, out, words // 16, n // bn,
                                                            STAGES=st, WITH_X=with_x, num_warps=4)
                              for d in descs], calls=10)
                print(f"W13 EP8 words, {bn}-row boxes, {st} stages, x tiles {'yes' if with_x else 'no '}:"
                      f" {t:.1f} us ({nbytes / t / 1e3:.0f} GB/s of words)", flush=True)


if __name__ == "__main__":
    main()
