"""The MoE experts' gated activation in one pass: h = [gate | up] [T, 2F] (fc1's output) and
router probs [T] -> silu(gate) * up * prob, bf16 [T, F], bit for bit quant.ops.gated_activation
(numerics.swiglu's roundings), which takes several torch kernels. For fc1 GEMMs whose fused
SwiGLU epilogue costs more than the plain GEMM and this pass (w4a16_gemm.w4a16_grouped_swiglu_op).
"""
import torch
import triton
import triton.language as tl

from .checks import check_swiglu_input
from .numerics import INTERPRETED, swiglu, to_bf16

_BLOCK_F = 128
#: rows up to which a program takes one row with one warp, as the FP8 row quantizers
#: (fp8_quantize.ONE_ROW_PROGRAMS): a 16-row program of mostly masked rows costs more
_ONE_ROW_PROGRAMS = 32


@triton.jit
def _swiglu_kernel(h_ptr, p_ptr, y_ptr, rows, F, stride_hm, stride_ym, HAS_PROBS: tl.constexpr,
                   BLOCK_R: tl.constexpr, BLOCK_F: tl.constexpr, SOFTWARE: tl.constexpr):
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    mask = (offs_r[:, None] < rows) & (offs_f[None, :] < F)
    gate_ptrs = h_ptr + offs_r[:, None].to(tl.int64) * stride_hm + offs_f[None, :]
    gate = tl.load(gate_ptrs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_ptrs + F, mask=mask, other=0.0).to(tl.float32)
    prob = tl.zeros([BLOCK_R], dtype=tl.float32)
    if HAS_PROBS:
        prob = tl.load(p_ptr + offs_r, mask=offs_r < rows, other=0.0).to(tl.float32)
    act = swiglu(gate, up, prob[:, None], HAS_PROBS, SOFTWARE)
    tl.store(y_ptr + offs_r[:, None].to(tl.int64) * stride_ym + offs_f[None, :],
             to_bf16(act, SOFTWARE), mask=mask)


def swiglu_bf16(h: torch.Tensor, probs: torch.Tensor = None) -> torch.Tensor:
    """h = [gate | up] [T, 2F] bf16, probs [T] or None -> bf16 [T, F], equal to
    quant.ops.gated_activation(h, probs) (without probs: silu(gate) * up)."""
    check_swiglu_input(h, probs)
    rows, ffn = h.shape[0], h.shape[1] // 2
    y = torch.empty(rows, ffn, device=h.device, dtype=torch.bfloat16)
    if rows and ffn:
        h = h if h.stride(-1) == 1 else h.contiguous()
        block_rows = 1 if rows <= _ONE_ROW_PROGRAMS else 16
        _swiglu_kernel[(triton.cdiv(rows, block_rows), triton.cdiv(ffn, _BLOCK_F))](
            h, h if probs is None else probs.contiguous(), y, rows, ffn, h.stride(0),
            y.stride(0), HAS_PROBS=probs is not None, BLOCK_R=block_rows, BLOCK_F=_BLOCK_F,
            SOFTWARE=INTERPRETED, num_warps=1 if block_rows == 1 else 4)
    return y
