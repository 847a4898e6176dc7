"""FP8 block experts to the bf16 operand of the backward's grad_input GEMM.

The forward multiplies FP8 codes on tensor cores; the straight-through backward needs
grad_out_e @ W_e with W_e the dequantized weight. bf16(e4m3 * block scale) feeds
torch._grouped_mm (bf16 tensor cores, fp32 accumulation). The rounding to bf16 is the
one departure from the pure-torch STE reference, which keeps the fp32 product
(quant.fp8_block.FP8Block.weight_operand_dtype): a relative error of at most 2^-9 per weight,
the rounding every bf16 dgrad GEMM makes. Experts with no tokens are skipped.
"""
import torch
import triton
import triton.language as tl

from megatron_qarl.quant.fp8_block import BLOCK

from .numerics import INTERPRETED, to_bf16


@triton.jit
def _fp8_dequantize_kernel(q_ptr, s_ptr, out_ptr, counts_ptr, N, K, stride_qe, stride_qn,
                           stride_se, stride_sn, BLOCK: tl.constexpr, SKIP_EMPTY: tl.constexpr,
                           SOFTWARE: tl.constexpr):
    """One 128x128 weight block (one scale) per program."""
    pid_n, kb, e = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs_k = kb * BLOCK + tl.arange(0, BLOCK)
    n_rows = N
    if SKIP_EMPTY:
        n_rows = tl.where(tl.load(counts_ptr + e) > 0, N, 0)
    mask = (offs_n[:, None] < n_rows) & (offs_k[None, :] < K)
    q = tl.load(q_ptr + e.to(tl.int64) * stride_qe + offs_n[:, None] * stride_qn
                + offs_k[None, :], mask=mask, other=0.0)
    scale = tl.load(s_ptr + e.to(tl.int64) * stride_se + pid_n * stride_sn + kb)
    w = to_bf16(q.to(tl.float32) * scale, SOFTWARE)
    tl.store(out_ptr + (e.to(tl.int64) * N + offs_n[:, None]) * K + offs_k[None, :], w,
             mask=mask)


def fp8_dequantize(qweight, tokens_per_expert: torch.Tensor = None) -> torch.Tensor:
    """FP8Block QuantizedWeight [..., out, in] -> bf16 [..., out, in]; with per-expert counts,
    experts with zero tokens are left unwritten (the grouped GEMM never reads their rows)."""
    n, k = qweight.shape[-2], qweight.shape[-1]
    q3 = qweight.data.reshape(-1, n, k)
    s3 = qweight.scale.reshape(q3.shape[0], *qweight.scale.shape[-2:])
    out = torch.empty(qweight.shape, device=q3.device, dtype=torch.bfloat16)
    skip = tokens_per_expert is not None
    counts = tokens_per_expert.to(q3.device, torch.int32) if skip else s3
    if out.numel():
        grid = (triton.cdiv(n, BLOCK), triton.cdiv(k, BLOCK), q3.shape[0])
        _fp8_dequantize_kernel[grid](
            q3, s3, out, counts, n, k, q3.stride(0), q3.stride(1), s3.stride(0), s3.stride(1),
            BLOCK=BLOCK, SKIP_EMPTY=skip, SOFTWARE=INTERPRETED, num_warps=8)
    return out
