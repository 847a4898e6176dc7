"""Tensor-core rate of the W4A16 decode wgmma shape: m64 x N x k16 bf16 with A from registers
(as the Gluon kernel issues it, 4 per 64-input half) or from shared memory, per SM with 1-4
warpgroups resident, against the 32 cycles an m64n64k16 takes at the nominal peak."""
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma, warpgroup_mma_wait
from qarl_kernels.bench_setup import graph_us


@gluon.jit
def _kernel(out_ptr, ITERS: gl.constexpr, N: gl.constexpr, RS: gl.constexpr, WAIT: gl.constexpr,
            FRESH: gl.constexpr, num_warps: gl.constexpr):
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                         instr_shape=[16, N, 16])
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=2)
    b_smem_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([N, 64], gl.bfloat16)
    a_smem_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([64, 64], gl.bfloat16)
    blk: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    rows = gl.arange(0, 64, gl.SliceLayout(1, blk))
    cols = gl.arange(0, 64, gl.SliceLayout(0, blk))
    tile = (gl.expand_dims(rows, 1) * 64 + gl.expand_dims(cols, 0)).to(gl.bfloat16) * 0.001
    b_buf = gl.allocate_shared_memory(gl.bfloat16, [N, 64], b_smem_layout)
    nrows = gl.arange(0, N, gl.SliceLayout(1, blk))
    b_buf.store((gl.expand_dims(nrows, 1) + gl.expand_dims(cols, 0)).to(gl.bfloat16) * 0.01)
    a_buf = gl.allocate_shared_memory(gl.bfloat16, [64, 64], a_smem_layout)
    a_buf.store(tile)
    gl.thread_barrier() if hasattr(gl, "thread_barrier") else gl.barrier()
    a = a_buf.load(a_layout)
    acc = gl.zeros([64, N], gl.float32, acc_layout)
    prev = a
    for i in range(ITERS):
        if FRESH:
            a = a + prev * 0  # a fresh register set per half, as the unpack makes
        if RS:
            acc = warpgroup_mma(a, b_buf.permute((1, 0)), acc, is_async=True)
        else:
            acc = warpgroup_mma(a_buf, b_buf.permute((1, 0)), acc, is_async=True)
        if WAIT:
            acc, prev = warpgroup_mma_wait(num_outstanding=1, deps=(acc, prev))
        prev = a
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    r = gl.sum(gl.sum(acc, 1), 0)
    gl.store(out_ptr + gl.program_id(0), r)


def main():
    out = torch.empty(132 * 8, device="cuda")
    iters = 2048
    for n, rs, wait, fresh in ((64, True, True, True), (64, True, True, False),
                               (64, False, True, False), (32, True, True, True),
                               (128, True, True, True), (16, True, True, True)):
        for per_sm in (1, 3):
            grid = 132 * per_sm
            t = graph_us([lambda: _kernel[(grid, )](out, ITERS=iters, N=n, RS=rs, WAIT=wait,
                                                    FRESH=fresh, num_warps=4)])
            clocks = t * 1e-6 * 1.755e9
            per = clocks / (iters * 4 * per_sm)
            print(f"m64n{n}k16 {'RS' if rs else 'SS'} wait={int(wait)} fresh={int(fresh)} {per_sm} WG/SM: {t:.1f} us, "
                  f"{per:.1f} cycles per wgmma per SM (1.755 GHz; 32 x n/64 at peak)", flush=True)


if __name__ == "__main__":
    main()
