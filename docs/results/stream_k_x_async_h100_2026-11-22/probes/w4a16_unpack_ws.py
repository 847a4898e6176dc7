"""Probe: W4A16 grouped GEMM with the unpack off the MMA's path (warp-specialized).
One loader warp: words, scales, x by TMA/cp.async into a ring. One unpack warpgroup: words ->
bf16 A operand in shared memory (NVMMA layout). The default warpgroup: wgmma with A and x from
shared memory. One tile per CTA."""
import functools

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, \
    warpgroup_mma, warpgroup_mma_wait

from qarl_kernels.expert_tiles import tile_bound
from qarl_kernels.gluon_hopper import cta_barrier, expert_tables, row_tile_count, tile_of
from qarl_kernels.w4a16_gluon import (GROUP, HALF, STAGE_WORDS, BLOCK_K, HALF_K, WORDS, _WORD_LAYOUT,
                                      _descriptor, _halves, _issue, _layouts, _scale_pairs,
                                      _unpack, _x_layout)
from qarl_kernels.w4a16_lanes import lane_codes


_LAYOUTS = {}
import os
MODE = int(os.environ.get("WS_MODE", 0))  # 1: no unpack (stale A), 2: no MMA, 3: neither


@gluon.constexpr_function
def _mode():
    return MODE


@gluon.constexpr_function
def _layout(block_n, block_m, which):
    return _LAYOUTS[(block_n, block_m)][which]


@gluon.jit
def _loader(args):
    (w_desc, x_desc, x_ptr, s_ptr, stride_xm, stride_se, stride_sn, N, steps, w_bufs, x_bufs,
     s_bufs, a_bufs, ready, a_ready, empty, tables, n_blocks, num_experts, y_ptr, stride_ym) = args
    STAGES: gl.constexpr = w_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[0]
    expert, row_start, row_end, nb = tile_of(tables, gl.program_id(0), n_blocks, num_experts,
                                             BLOCK_M, 1)
    for kb in range(steps):
        s = kb % STAGES
        mbarrier.wait(empty.index(s), ((kb // STAGES) & 1) ^ 1)
        _issue(w_desc, x_desc, w_bufs, x_bufs, s_bufs, ready, s, kb, expert, nb * BLOCK_N,
               row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, False,
               False, 1)


@gluon.jit
def _unpacker(args):
    (w_desc, x_desc, x_ptr, s_ptr, stride_xm, stride_se, stride_sn, N, steps, w_bufs, x_bufs,
     s_bufs, a_bufs, ready, a_ready, empty, tables, n_blocks, num_experts, y_ptr, stride_ym) = args
    STAGES: gl.constexpr = w_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[0]
    acc_layout: gl.constexpr = _layout(BLOCK_N, BLOCK_M, 0)
    word_layout: gl.constexpr = _layout(BLOCK_N, BLOCK_M, 1)
    split_layout: gl.constexpr = _layout(BLOCK_N, BLOCK_M, 2)
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=2)
    row_layout: gl.constexpr = gl.SliceLayout(1, a_layout)
    for kb in range(steps):
        s = kb % STAGES
        mbarrier.wait(ready.index(s), (kb // STAGES) & 1)
        if _mode() % 2 == 0:
            scale2 = _scale_pairs(s_bufs.index(s), kb, row_layout)
            halves = _halves(w_bufs.index(s).load(word_layout))
            for h in gl.static_range(2):
                a_bufs.index(2 * s + h).store(_unpack(halves[h], scale2, a_layout, split_layout))
        fence_async_shared()
        cta_barrier()  # the partition's stores are all done before its one arrival
        mbarrier.arrive(a_ready.index(s), count=1)


@gluon.jit
def _consumer(args):
    (w_desc, x_desc, x_ptr, s_ptr, stride_xm, stride_se, stride_sn, N, steps, w_bufs, x_bufs,
     s_bufs, a_bufs, ready, a_ready, empty, tables, n_blocks, num_experts, y_ptr, stride_ym) = args
    STAGES: gl.constexpr = w_bufs.type.shape[0]
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[0]
    expert, row_start, row_end, nb = tile_of(tables, gl.program_id(0), n_blocks, num_experts,
                                             BLOCK_M, 4)
    acc_layout: gl.constexpr = _layout(BLOCK_N, BLOCK_M, 0)
    acc = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
    for kb in range(steps):
        s = kb % STAGES
        mbarrier.wait(a_ready.index(s), (kb // STAGES) & 1)
        if _mode() < 2:
            for h in gl.static_range(2):
                acc = warpgroup_mma(a_bufs.index(2 * s + h),
                                    x_bufs.index(2 * s + h).permute((1, 0)), acc, is_async=True)
            acc = warpgroup_mma_wait(num_outstanding=2, deps=(acc, ))
        if kb > 0:  # block kb - 1's wgmmas are done with its stage
            mbarrier.arrive(empty.index((kb - 1) % STAGES), count=1)
    acc = warpgroup_mma_wait(num_outstanding=0, deps=(acc, ))
    out_layout: gl.constexpr = gl.BlockedLayout([8, 1], [16, 2], [1, 4], [0, 1])
    out = gl.convert_layout(acc.to(gl.bfloat16), out_layout)
    cols = nb * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, out_layout))
    rows = row_start + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, out_layout))
    ptrs = y_ptr + gl.expand_dims(rows.to(gl.int64) * stride_ym, 0) + gl.expand_dims(cols, 1)
    gl.store(ptrs, out, mask=gl.expand_dims(rows < row_end, 0) & gl.expand_dims(cols < N, 1))


@gluon.jit(do_not_specialize=["num_experts"])
def _ws_kernel(w_desc, x_desc, x_ptr, s_ptr, y_ptr, counts_ptr, num_experts, N, K, stride_xm,
               stride_se, stride_sn, stride_ym, E_PAD: gl.constexpr,
               STAGES: gl.constexpr, UNPACK_REGS: gl.constexpr, MODE_KEY: gl.constexpr,
               num_warps: gl.constexpr):
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[0]
    tables = expert_tables(counts_ptr, num_experts, BLOCK_M, E_PAD, num_warps)
    n_blocks = gl.cdiv(N, BLOCK_N)
    if gl.program_id(0) >= row_tile_count(tables, num_warps) * n_blocks:
        return
    gl.assume(K >= BLOCK_K)
    steps = K // BLOCK_K
    w_bufs = gl.allocate_shared_memory(gl.int32, [STAGES, BLOCK_N, WORDS], w_desc.layout)
    x_bufs = gl.allocate_shared_memory(gl.bfloat16, [2 * STAGES, BLOCK_M, HALF_K], x_desc.layout)
    s_bufs = gl.allocate_shared_memory(gl.int32, [STAGES, BLOCK_N],
                                       gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    a_smem: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_N, HALF_K], gl.bfloat16)
    a_bufs = gl.allocate_shared_memory(gl.bfloat16, [2 * STAGES, BLOCK_N, HALF_K], a_smem)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    a_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(a_ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    args = (w_desc, x_desc, x_ptr, s_ptr, stride_xm, stride_se, stride_sn, N, steps, w_bufs,
            x_bufs, s_bufs, a_bufs, ready, a_ready, empty, tables, n_blocks, num_experts, y_ptr,
            stride_ym)
    gl.warp_specialize([(_consumer, (args, )), (_unpacker, (args, )), (_loader, (args, ))],
                       [4, 1], [UNPACK_REGS, 40])


def w4a16_grouped_ws(x: torch.Tensor, qweight, counts: torch.Tensor, block_m: int = 64,
                     block_n: int = 64, stages: int = 3, unpack_regs: int = 128,
                     maxnreg: int = None) -> torch.Tensor:
    data, scale = qweight.data, qweight.scale
    num_experts, n, words = data.shape
    rows, k = x.shape[0], qweight.in_features
    y = torch.empty(rows, n, device=x.device, dtype=torch.bfloat16)
    if rows == 0:
        return y
    w_desc = _descriptor(lane_codes(qweight).view(num_experts * n, words),
                         [block_n, STAGE_WORDS], _WORD_LAYOUT)
    x_desc = _descriptor(x, [block_m, HALF], _x_layout(block_m))
    grid = triton.cdiv(n, block_n) * tile_bound(rows, num_experts, block_m)
    _LAYOUTS[(block_n, block_m)] = _layouts(block_n, block_m)
    sw = scale.view(torch.int32)
    _ws_kernel[(grid, )](
        w_desc, x_desc, x, sw, y, counts, num_experts, n, k, x.stride(0), sw.stride(0),
        sw.stride(1), y.stride(0), E_PAD=triton.next_power_of_2(num_experts), STAGES=min(stages, k // GROUP), 
        UNPACK_REGS=unpack_regs, MODE_KEY=MODE, num_warps=4, **({} if maxnreg is None else {"maxnreg": maxnreg}))
    return y
