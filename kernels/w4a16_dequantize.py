"""Fused dequantization of W4A16 experts to the bf16 GEMM operand, bf16((nibble-8)*scale).

For training-size batches the GEMM is compute-bound and torch._grouped_mm's tuned bf16
kernels beat an in-loop dequantizing kernel; dequantizing first costs one pass over the
int4 weights (0.5 B/param read, 2 B/param written). Experts with no tokens are skipped.
"""
import torch
import triton
import triton.language as tl

from .numerics import INTERPRETED, int4_value, to_bf16


@triton.jit
def _w4a16_dequantize_kernel(w_ptr, s_ptr, out_ptr, counts_ptr, N, K,
                             stride_we, stride_wn, stride_se, stride_sn,
                             GROUP: tl.constexpr, BLOCK_N: tl.constexpr,
                             SKIP_EMPTY: tl.constexpr, SOFTWARE: tl.constexpr):
    pid_n, g, e = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_rows = N
    if SKIP_EMPTY:
        n_rows = tl.where(tl.load(counts_ptr + e) > 0, N, 0)
    n_mask = offs_n < n_rows
    words = tl.arange(0, GROUP // 8)
    shifts = tl.arange(0, 8) * 4
    packed = tl.load(w_ptr + e.to(tl.int64) * stride_we + offs_n[:, None] * stride_wn
                     + g * (GROUP // 8) + words[None, :], mask=n_mask[:, None], other=0)
    q = int4_value(tl.reshape((packed[:, :, None] >> shifts[None, None, :]) & 0xF,
                              [BLOCK_N, GROUP]))
    scale = tl.load(s_ptr + e.to(tl.int64) * stride_se + offs_n * stride_sn + g,
                    mask=n_mask, other=0.0).to(tl.float32)
    w = to_bf16(q * scale[:, None], SOFTWARE)
    offs_k = g * GROUP + tl.arange(0, GROUP)
    tl.store(out_ptr + (e.to(tl.int64) * N + offs_n[:, None]) * K + offs_k[None, :], w,
             mask=n_mask[:, None])


def w4a16_dequantize(qweight, tokens_per_expert: torch.Tensor = None,
                     block_n: int = 64) -> torch.Tensor:
    """QuantizedWeight [..., out, in] -> bf16 [..., out, in]; with per-expert counts, experts
    with zero tokens are left unwritten (their rows are never read by the grouped GEMM)."""
    data, scale = qweight.data, qweight.scale
    group = qweight.scheme.group_size
    n, k = qweight.shape[-2], qweight.shape[-1]
    d3, s3 = data.reshape(-1, n, k // 8), scale.reshape(-1, n, k // group)
    out = torch.empty(qweight.shape, device=data.device, dtype=torch.bfloat16)
    skip = tokens_per_expert is not None
    counts = tokens_per_expert.to(data.device, torch.int32) if skip else d3
    if out.numel():
        grid = (triton.cdiv(n, block_n), k // group, d3.shape[0])
        _w4a16_dequantize_kernel[grid](
            d3, s3, out, counts, n, k, d3.stride(0), d3.stride(1), s3.stride(0), s3.stride(1),
            GROUP=group, BLOCK_N=block_n, SKIP_EMPTY=skip, SOFTWARE=INTERPRETED, num_warps=4)
    return out
