"""The experts' gated activation for training, silu(gate) * up over fc1's output
h = [gate | up], one pass forward and one backward (the router prob is fc2's: its GEMM
applies it to its output, quant.ops.grouped_linear).

torch's composite (quant.ops.reference_gated_activation) runs several kernels each way, with
fp32 [rows, F] intermediates, and keeps them for its backward; these keep h only. The
forward equals the composite bit for bit on the GPU (numerics.swiglu, the roundings of every
fused SwiGLU of the rollout kernels), so fc2 of the learner sees what it saw in the rollout.
The backward repeats torch autograd's fp32 steps, rounding each grad to bf16 once.
"""
import torch
import triton
import triton.language as tl

from .checks import check_swiglu_input, unit_stride_rows
from .numerics import INTERPRETED, exp_neg, swiglu_tile, to_bf16

#: rows x columns of a forward program: the best of 7 and 8 tiles, or within 3.5% of it, at
#: 32768 and 131072 rows of F = 768 and 131072 of F = 256 (H200: 83-95% of copy bandwidth;
#: docs/results/swiglu_h200_2026-11-29, call 1); the backward, elementwise now too, takes the
#: same tiles
FORWARD_TILE = BACKWARD_TILE = (8, 256)


@triton.jit
def _swiglu_forward_kernel(h_ptr, y_ptr, rows, F, stride_hm, stride_ym, BLOCK_R: tl.constexpr,
                           BLOCK_F: tl.constexpr, SOFTWARE: tl.constexpr):
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    y, mask = swiglu_tile(h_ptr, offs_r[:, None], offs_f[None, :], rows, F, stride_hm, SOFTWARE)
    tl.store(y_ptr + offs_r[:, None].to(tl.int64) * stride_ym + offs_f[None, :],
             to_bf16(y, SOFTWARE), mask=mask)


@triton.jit
def _swiglu_backward_kernel(g_ptr, h_ptr, dh_ptr, rows, F, stride_gm, stride_hm, stride_dhm,
                            BLOCK_R: tl.constexpr, BLOCK_F: tl.constexpr,
                            SOFTWARE: tl.constexpr):
    """torch autograd's steps for y = bf16(silu(gate) * up) in fp32: d_up = bf16(g * silu),
    d_gate = bf16(g * up * s * (1 + gate * (1 - s))) with s = sigmoid(gate)."""
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    mask = (offs_r[:, None] < rows) & (offs_f[None, :] < F)
    rows64 = offs_r[:, None].to(tl.int64)
    g = tl.load(g_ptr + rows64 * stride_gm + offs_f[None, :], mask=mask,
                other=0.0).to(tl.float32)
    gate_ptrs = h_ptr + rows64 * stride_hm + offs_f[None, :]
    gate = tl.load(gate_ptrs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_ptrs + F, mask=mask, other=0.0).to(tl.float32)
    e = exp_neg(gate, SOFTWARE)
    sig = tl.div_rn(1.0, 1.0 + e)
    d_gate = g * up * sig * (1.0 + gate * (1.0 - sig))
    dh_ptrs = dh_ptr + rows64 * stride_dhm + offs_f[None, :]
    tl.store(dh_ptrs, to_bf16(d_gate, SOFTWARE), mask=mask)
    tl.store(dh_ptrs + F, to_bf16(g * tl.div_rn(gate, 1.0 + e), SOFTWARE), mask=mask)


def swiglu_forward(h: torch.Tensor) -> torch.Tensor:
    """h [R, 2F] bf16 -> silu(gate) * up [R, F] bf16."""
    check_swiglu_input(h)
    rows, ffn = h.shape[0], h.shape[1] // 2
    y = torch.empty(rows, ffn, device=h.device, dtype=torch.bfloat16)
    if rows and ffn:
        h = unit_stride_rows(h)
        block_r, block_f = FORWARD_TILE
        _swiglu_forward_kernel[(triton.cdiv(rows, block_r), triton.cdiv(ffn, block_f))](
            h, y, rows, ffn, h.stride(0), y.stride(0), BLOCK_R=block_r, BLOCK_F=block_f,
            SOFTWARE=INTERPRETED, num_warps=4)
    return y


def swiglu_backward(grad: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """grad_h [R, 2F] bf16 for grad [R, F] of the forward."""
    check_swiglu_input(h)
    rows, ffn = h.shape[0], h.shape[1] // 2
    if tuple(grad.shape) != (rows, ffn):
        raise ValueError(f"grad: shape {tuple(grad.shape)}; the forward's output is "
                         f"({rows}, {ffn})")
    grad_h = torch.empty_like(h, memory_format=torch.contiguous_format)
    if rows and ffn:
        grad, h = unit_stride_rows(grad), unit_stride_rows(h)
        block_r, block_f = BACKWARD_TILE
        _swiglu_backward_kernel[(triton.cdiv(rows, block_r), triton.cdiv(ffn, block_f))](
            grad, h, grad_h, rows, ffn, grad.stride(0), h.stride(0), grad_h.stride(0),
            BLOCK_R=block_r, BLOCK_F=block_f, SOFTWARE=INTERPRETED, num_warps=4)
    return grad_h


class _GatedSilu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h):
        ctx.save_for_backward(h)
        return swiglu_forward(h)

    @staticmethod
    def backward(ctx, grad):
        (h,) = ctx.saved_tensors
        return swiglu_backward(grad, h)


def gated_silu(h: torch.Tensor) -> torch.Tensor:
    """The quant.ops gated-activation op: differentiable in h."""
    return _GatedSilu.apply(h)
