"""Probe: the Gluon W4A16 decode kernel with mma.sync (m16n8k16, Marlin's instruction) in place
of the asynchronous wgmma. Same ring, same lane-order words, same unpack (its A registers are
the same fragment), x from shared memory into B registers (ldmatrix). Each warp's MMAs are
synchronous in the program: no wgmma fence, commit, or wait group, no warpgroup coupling.
For plain GEMMs (no SwiGLU), x by TMA."""
import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import mma_v2
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

from qarl_kernels import w4a16_gluon as wg
from qarl_kernels.expert_tiles import tile_bound
from qarl_kernels.gluon_hopper import cta_barrier, expert_tables, row_tile_count, sm_count, \
    tile_of
from qarl_kernels.w4a16_lanes import lane_codes

BLOCK_K, HALF_K, WORDS = wg.BLOCK_K, wg.HALF_K, wg.WORDS


def layouts(block_n, block_m, acc_chains):
    _, words, operand = wg._layouts(block_n, block_m)
    acc = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])
    return acc, words, operand


@gluon.jit(do_not_specialize=["num_experts"])
def _kernel(w_desc, x_desc, x_ptr, s_ptr, y_ptr, counts_ptr, num_experts, N, K, stride_xm,
            stride_se, stride_sn, stride_ym, acc_layout: gl.constexpr,
            word_layout: gl.constexpr, split_layout: gl.constexpr, E_PAD: gl.constexpr,
            STAGES: gl.constexpr, PERSISTENT: gl.constexpr, TWO_ACC: gl.constexpr,
            num_warps: gl.constexpr):
    BLOCK_N: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_M: gl.constexpr = x_desc.block_type.shape[0]
    a_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc_layout, k_width=2)
    b_layout: gl.constexpr = gl.DotOperandLayout(operand_index=1, parent=acc_layout, k_width=2)

    tables = expert_tables(counts_ptr, num_experts, BLOCK_M, E_PAD, num_warps)
    n_blocks = gl.cdiv(N, BLOCK_N)
    tiles = row_tile_count(tables, num_warps) * n_blocks
    tile = gl.program_id(0)
    grid = gl.num_programs(0)
    if tile >= tiles:
        return
    gl.assume(K >= BLOCK_K)
    steps = K // BLOCK_K

    w_bufs = gl.allocate_shared_memory(gl.int32, [STAGES, BLOCK_N, WORDS], w_desc.layout)
    x_bufs = gl.allocate_shared_memory(gl.bfloat16, [2 * STAGES, BLOCK_M, HALF_K],
                                       x_desc.layout)
    s_bufs = gl.allocate_shared_memory(gl.int32, [STAGES, BLOCK_N],
                                       gl.SwizzledSharedLayout(1, 1, 1, order=[0]))
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts, BLOCK_M,
                                             num_warps)
    for i in gl.static_range(STAGES):
        wg._issue(w_desc, x_desc, w_bufs, x_bufs, s_bufs, ready, i, i, expert, nb * BLOCK_N,
                  row_start, row_end, x_ptr, stride_xm, s_ptr, N, stride_se, stride_sn, False,
                  False, num_warps)

    row_layout: gl.constexpr = gl.SliceLayout(1, a_layout)
    out_layout: gl.constexpr = gl.BlockedLayout([8, 1], [16, 2], [1, 4], [0, 1])
    j = 0
    for tile in range(tile, tiles if PERSISTENT else tile + 1, grid if PERSISTENT else 1):
        expert, row_start, row_end, nb = tile_of(tables, tile, n_blocks, num_experts, BLOCK_M,
                                                 num_warps)
        acc = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
        acc2 = gl.zeros([BLOCK_N, BLOCK_M], gl.float32, acc_layout)
        for kb in range(steps):
            s = j % STAGES
            mbarrier.wait(ready.index(s), (j // STAGES) & 1)
            scale2 = wg._scale_pairs(s_bufs.index(s), kb, row_layout)
            halves = wg._halves(w_bufs.index(s).load(word_layout))
            for h in gl.static_range(2):
                b = x_bufs.index(2 * s + h).permute((1, 0)).load(b_layout)
                a = wg._unpack(halves[h], scale2, a_layout, split_layout)
                if TWO_ACC and h == 1:
                    acc2 = mma_v2(a, b, acc2)
                else:
                    acc = mma_v2(a, b, acc)
            cta_barrier()  # every warp has this block's words and x in registers
            ahead = kb + STAGES
            if ahead < steps:
                wg._issue(w_desc, x_desc, w_bufs, x_bufs, s_bufs, ready, s, ahead, expert,
                          nb * BLOCK_N, row_start, row_end, x_ptr, stride_xm, s_ptr, N,
                          stride_se, stride_sn, False, False, num_warps)
            elif PERSISTENT:
                if tile + grid < tiles:
                    next_expert, next_start, next_end, next_nb = tile_of(
                        tables, tile + grid, n_blocks, num_experts, BLOCK_M, num_warps)
                    wg._issue(w_desc, x_desc, w_bufs, x_bufs, s_bufs, ready, s, ahead - steps,
                              next_expert, next_nb * BLOCK_N, next_start, next_end, x_ptr,
                              stride_xm, s_ptr, N, stride_se, stride_sn, False, False,
                              num_warps)
            j += 1
        if TWO_ACC:
            acc = acc + acc2
        out = gl.convert_layout(acc.to(gl.bfloat16), out_layout)
        cols = nb * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, out_layout))
        rows = row_start + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(0, out_layout))
        ptrs = y_ptr + gl.expand_dims(rows.to(gl.int64) * stride_ym, 0) + gl.expand_dims(cols, 1)
        gl.store(ptrs, out, mask=gl.expand_dims(rows < row_end, 0) & gl.expand_dims(cols < N, 1))


def run(x, qweight, counts, block_m=8, block_n=128, stages=3, ctas_per_sm=None, two_acc=False):
    data, scale = qweight.data, qweight.scale
    num_experts, n, words = data.shape
    rows, k = x.shape[0], qweight.in_features
    y = torch.empty(rows, n, device=x.device, dtype=torch.bfloat16)
    w_desc = wg._descriptor(lane_codes(qweight).view(num_experts * n, words),
                            [block_n, wg.STAGE_WORDS], wg._WORD_LAYOUT)
    x_desc = wg._descriptor(x, [block_m, wg.HALF], wg._x_layout(block_m))
    grid = triton.cdiv(n, block_n) * tile_bound(rows, num_experts, block_m)
    if ctas_per_sm:
        grid = min(grid, ctas_per_sm * sm_count(x.device))
    sw = scale.view(torch.int32)
    _kernel[(grid, )](w_desc, x_desc, x, sw, y, counts, num_experts, n, k, x.stride(0),
                      sw.stride(0), sw.stride(1), y.stride(0),
                      *layouts(block_n, block_m, two_acc),
                      E_PAD=triton.next_power_of_2(num_experts),
                      STAGES=min(stages, k // wg.GROUP), PERSISTENT=bool(ctas_per_sm),
                      TWO_ACC=two_acc, num_warps=4)
    return y
