"""The experts' gated activation for training, silu(gate) * up * prob over fc1's output
h = [gate | up], one pass forward and one backward.

torch's composite (quant.ops.reference_gated_activation) runs four kernels forward, one of
them writing an fp32 [rows, F] product, about ten backward, and keeps two more [rows, F]
tensors for its backward; these keep h and the probs only. The forward equals the composite
bit for bit on the GPU (numerics.swiglu, the roundings of every fused SwiGLU of the rollout
kernels), so fc2 of the learner sees what it saw in the rollout. The backward repeats torch
autograd's roundings step by step: the grad of the bf16 product rounded to bf16, silu's
grad in fp32 from sigmoid(gate); grad_probs sums a row in fp32 in its own order.
"""
import torch
import triton
import triton.language as tl

from .checks import check_swiglu_input, unit_stride_rows
from .numerics import INTERPRETED, exp_neg, round_to_bf16, swiglu_tile, to_bf16

#: rows x columns of a forward program, rows of a backward program (which walks all of F to
#: sum grad_probs) and its column step: the best of 7 and 8 tiles, or within 3.5% of it, at
#: 32768 and 131072 rows of F = 768 and 131072 of F = 256 (H200: forward 83-95% of copy
#: bandwidth, backward 88-96%; docs/results/swiglu_h200_2026-11-29, call 1)
FORWARD_TILE = (8, 256)
BACKWARD_ROWS, BACKWARD_COLS = 4, 256


@triton.jit
def _swiglu_forward_kernel(h_ptr, p_ptr, y_ptr, rows, F, stride_hm, stride_ym,
                           BLOCK_R: tl.constexpr, BLOCK_F: tl.constexpr, SOFTWARE: tl.constexpr):
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_f = tl.program_id(1) * BLOCK_F + tl.arange(0, BLOCK_F)
    y, mask = swiglu_tile(h_ptr, p_ptr, offs_r[:, None], offs_f[None, :], rows, F, stride_hm,
                          True, SOFTWARE)
    tl.store(y_ptr + offs_r[:, None].to(tl.int64) * stride_ym + offs_f[None, :],
             to_bf16(y, SOFTWARE), mask=mask)


@triton.jit
def _swiglu_backward_kernel(g_ptr, h_ptr, p_ptr, dh_ptr, dp_ptr, rows, F, stride_gm, stride_hm,
                            stride_dhm, BLOCK_R: tl.constexpr, BLOCK_F: tl.constexpr,
                            SOFTWARE: tl.constexpr):
    """torch's steps, out = bf16(silu(gate) * up), y = out * prob: d_out = bf16(g * prob),
    d_up = bf16(d_out * silu), d_silu = bf16(d_out * up), d_gate = bf16(d_silu * s * (1 +
    gate * (1 - s))) with s = sigmoid(gate), d_prob = sum over the row of g * out."""
    offs_r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = offs_r < rows
    rows64 = offs_r[:, None].to(tl.int64)
    prob = tl.load(p_ptr + offs_r, mask=row_ok, other=0.0).to(tl.float32)[:, None]
    d_prob = tl.zeros([BLOCK_R], dtype=tl.float32)
    for f0 in range(0, F, BLOCK_F):
        offs_f = f0 + tl.arange(0, BLOCK_F)
        mask = row_ok[:, None] & (offs_f[None, :] < F)
        g = tl.load(g_ptr + rows64 * stride_gm + offs_f[None, :], mask=mask,
                    other=0.0).to(tl.float32)
        gate_ptrs = h_ptr + rows64 * stride_hm + offs_f[None, :]
        gate = tl.load(gate_ptrs, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(gate_ptrs + F, mask=mask, other=0.0).to(tl.float32)
        e = exp_neg(gate, SOFTWARE)
        silu = round_to_bf16(tl.div_rn(gate, 1.0 + e), SOFTWARE)
        sig = tl.div_rn(1.0, 1.0 + e)
        out = round_to_bf16(silu * up, SOFTWARE)
        d_prob += tl.sum(g * out, axis=1)
        d_out = round_to_bf16(g * prob, SOFTWARE)
        d_silu = round_to_bf16(d_out * up, SOFTWARE)
        d_gate = d_silu * sig * (1.0 + gate * (1.0 - sig))
        dh_ptrs = dh_ptr + rows64 * stride_dhm + offs_f[None, :]
        tl.store(dh_ptrs, to_bf16(d_gate, SOFTWARE), mask=mask)
        tl.store(dh_ptrs + F, to_bf16(d_out * silu, SOFTWARE), mask=mask)
    tl.store(dp_ptr + offs_r, d_prob.to(dp_ptr.dtype.element_ty), mask=row_ok)


def swiglu_forward(h: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    """h [R, 2F] bf16, probs [R] -> silu(gate) * up * probs [R, F] bf16."""
    check_swiglu_input(h, probs)
    rows, ffn = h.shape[0], h.shape[1] // 2
    y = torch.empty(rows, ffn, device=h.device, dtype=torch.bfloat16)
    if rows and ffn:
        h = unit_stride_rows(h)
        block_r, block_f = FORWARD_TILE
        _swiglu_forward_kernel[(triton.cdiv(rows, block_r), triton.cdiv(ffn, block_f))](
            h, probs.contiguous(), y, rows, ffn, h.stride(0), y.stride(0), BLOCK_R=block_r,
            BLOCK_F=block_f, SOFTWARE=INTERPRETED, num_warps=4)
    return y


def swiglu_backward(grad: torch.Tensor, h: torch.Tensor, probs: torch.Tensor) -> tuple:
    """(grad_h [R, 2F] bf16, grad_probs [R] in probs' dtype) for grad [R, F] of the forward."""
    check_swiglu_input(h, probs)
    rows, ffn = h.shape[0], h.shape[1] // 2
    if tuple(grad.shape) != (rows, ffn):
        raise ValueError(f"grad: shape {tuple(grad.shape)}; the forward's output is "
                         f"({rows}, {ffn})")
    grad_h = torch.empty_like(h, memory_format=torch.contiguous_format)
    grad_p = torch.zeros(rows, device=h.device, dtype=probs.dtype)
    if rows and ffn:
        grad, h = unit_stride_rows(grad), unit_stride_rows(h)
        _swiglu_backward_kernel[(triton.cdiv(rows, BACKWARD_ROWS),)](
            grad, h, probs.contiguous(), grad_h, grad_p, rows, ffn, grad.stride(0), h.stride(0),
            grad_h.stride(0), BLOCK_R=BACKWARD_ROWS, BLOCK_F=BACKWARD_COLS,
            SOFTWARE=INTERPRETED, num_warps=4)
    return grad_h, grad_p


class _GatedSilu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, probs):
        ctx.save_for_backward(h, probs)
        return swiglu_forward(h, probs)

    @staticmethod
    def backward(ctx, grad):
        h, probs = ctx.saved_tensors
        grad_h, grad_p = swiglu_backward(grad, h, probs)
        return grad_h, grad_p if ctx.needs_input_grad[1] else None


def gated_silu(h: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    """The quant.ops gated-activation op: differentiable in h and probs."""
    return _GatedSilu.apply(h, probs)
