"""Straight-through estimator: forward with the rollout's low-bit numbers, backward as if the
quantizer were the identity, so gradients land in the full-precision master weights.

grad_input flows through the dequantized weight (what the forward used); grad_weight is the
full-precision product grad_out^T @ x, cast to the master weight's dtype.
"""
from __future__ import annotations

import torch

from . import ops
from .base import QuantizedWeight


def _dequantized_operand(qweight: QuantizedWeight) -> torch.Tensor:
    return qweight.dequantize().to(qweight.scheme.weight_operand_dtype).float()


class AlignedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, master_weight, qweight: QuantizedWeight):
        ctx.save_for_backward(x)
        ctx.qweight = qweight
        ctx.master_dtype = master_weight.dtype
        return ops.linear(x, qweight)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.matmul(grad_out.float(), _dequantized_operand(ctx.qweight)).to(x.dtype)
        if ctx.needs_input_grad[1]:
            g2 = grad_out.reshape(-1, grad_out.shape[-1]).float()
            grad_w = (g2.t() @ x.reshape(-1, x.shape[-1]).float()).to(ctx.master_dtype)
        return grad_x, grad_w, None


class AlignedGroupedLinear(torch.autograd.Function):
    """MoE experts: rows of x are sorted by expert; master_weight is [E, out, in]."""

    @staticmethod
    def forward(ctx, x, master_weight, qweight: QuantizedWeight, tokens_per_expert):
        ctx.save_for_backward(x, tokens_per_expert)
        ctx.qweight = qweight
        ctx.master_dtype = master_weight.dtype
        ctx.master_shape = master_weight.shape
        return ops.grouped_linear(x, qweight, tokens_per_expert)

    @staticmethod
    def backward(ctx, grad_out):
        x, tokens_per_expert = ctx.saved_tensors
        counts = [int(c) for c in tokens_per_expert.tolist()]
        grad_x = grad_w = None
        xs, gs = torch.split(x, counts), torch.split(grad_out, counts)
        if ctx.needs_input_grad[0]:
            w = _dequantized_operand(ctx.qweight)
            parts = [g.float() @ w[e] for e, g in enumerate(gs)]
            grad_x = (torch.cat(parts) if parts else x.new_zeros(x.shape).float()).to(x.dtype)
        if ctx.needs_input_grad[1]:
            grad_w = torch.stack([g.float().t() @ xe.float() for g, xe in zip(gs, xs)])
            grad_w = grad_w.to(ctx.master_dtype).reshape(ctx.master_shape)
        return grad_x, grad_w, None, None


def aligned_linear(x, master_weight, qweight: QuantizedWeight):
    return AlignedLinear.apply(x, master_weight, qweight)


def aligned_grouped_linear(x, master_weight, qweight: QuantizedWeight, tokens_per_expert):
    return AlignedGroupedLinear.apply(x, master_weight, qweight, tokens_per_expert)
