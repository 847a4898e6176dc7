"""Session 51, call 8: the FP8 weight quantizer walking along each row of blocks (this tree's
kernels/fp8_quantize.py: a program a row of 128 x 128 blocks, its blocks in turn) against one
block a program (calls 2-3's kernel, copied below), on one Qwen3-30B-A3B layer's experts (bf16
masters) laid out as layout_probe.py lays them. Bits checked equal; do_bench medians.
Usage: fp8_walk_probe.py"""
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, "docs/results/masters_h200_2026-11-29")
from layout_probe import layouts, us  # noqa: E402
from megatron_qarl.quant import get_scheme  # noqa: E402
from megatron_qarl.quant.fp8_block import BLOCK  # noqa: E402
from qarl_kernels.expert_masters import expert_offset, master_table  # noqa: E402
from qarl_kernels.fp8_quantize import (_EPS, _INV_MAX, _e4m3, _max_keeping_nan,  # noqa: E402
                                       fp8_block_quantize)


@triton.jit
def _block_kernel(w_ptr, offsets_ptr, q_ptr, s_ptr, N, K, stride_se, stride_sn,
                  BLOCK: tl.constexpr, ALIGN: tl.constexpr):
    pid_n, pid_k, e = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs_k = pid_k * BLOCK + tl.arange(0, BLOCK)
    mask = (offs_n[:, None] < N) & (offs_k[None, :] < K)
    block = offs_n[:, None].to(tl.int64) * K + offs_k[None, :]
    w = tl.load(w_ptr + expert_offset(offsets_ptr, e, ALIGN) + block, mask=mask,
                other=0.0).to(tl.float32)
    amax = tl.reduce(tl.reduce(tl.abs(w), 1, _max_keeping_nan), 0, _max_keeping_nan)
    scale = tl.maximum(amax, _EPS, propagate_nan=tl.PropagateNan.ALL) * _INV_MAX
    tl.store(q_ptr + e.to(tl.int64) * N * K + block, _e4m3(w, scale), mask=mask)
    tl.store(s_ptr + e * stride_se + pid_n * stride_sn + pid_k, scale)


def block_quantize(weight):
    """calls 2-3's fp8_block_quantize with check_finite=False (its kernel and NaN/inf count)."""
    masters = master_table(weight)
    shape = masters.shape
    n, k = shape[-2:]
    nb, kb = triton.cdiv(n, BLOCK), triton.cdiv(k, BLOCK)
    q = torch.empty(shape, device="cuda", dtype=torch.float8_e4m3fn)
    scale = torch.empty(*shape[:-2], nb, kb, device="cuda", dtype=torch.float32)
    s3 = scale.reshape(-1, nb, kb)
    _block_kernel[(nb, kb, masters.experts)](masters.base, masters.offsets, q, s3, n, k,
                                             s3.stride(0), s3.stride(1), BLOCK=BLOCK,
                                             ALIGN=masters.align, num_warps=8)
    (~torch.isfinite(scale)).sum(dtype=torch.int32)
    return q, scale


def main():
    print(torch.cuda.get_device_name(), flush=True)
    scheme = get_scheme("fp8-block")
    for label, (e, n, k) in [("W2 E128", (128, 2048, 768)), ("W13 E128", (128, 1536, 2048))]:
        for layout, masters in layouts(e, n, k).items():
            walked = fp8_block_quantize(masters, scheme, check_finite=False)
            q, scale = block_quantize(masters)
            assert torch.equal(walked.data.view(torch.uint8), q.view(torch.uint8))
            assert torch.equal(walked.scale, scale)
            t_walk = us(lambda: fp8_block_quantize(masters, scheme, check_finite=False))
            t_block = us(lambda: block_quantize(masters))
            print(f"{label} {layout}: a row of blocks a program {t_walk:.1f} us, a block a "
                  f"program {t_block:.1f} us", flush=True)
        del masters


if __name__ == "__main__":
    main()
