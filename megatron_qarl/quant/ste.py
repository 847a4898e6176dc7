"""Straight-through estimator: forward with the rollout's low-bit numbers, backward as if the
quantizer were the identity, so gradients land in the full-precision master weights.

grad_input flows through the dequantized weight (what the forward used); grad_weight is the
full-precision product grad_out^T @ x, cast to the master weight's dtype: the paper runs "the
forward pass in low bit while keeping the backward pass in full precision", so W8A8 schemes
take the activations unquantized here, not the codes their forward multiplied. Registered ops
(quant.ops) compute both on tensor cores where the reference multiplies in fp32.
"""
from __future__ import annotations

import torch

from . import ops
from .base import QuantizedWeight


def _dequantized_operand(qweight: QuantizedWeight) -> torch.Tensor:
    return qweight.dequantize().to(qweight.scheme.weight_operand_dtype).float()


class AlignedLinear(torch.autograd.Function):
    """shards: None, or under sequence parallelism the collectives over this rank's slice of
    the sequence (`gather`, `reduce_scatter` along dim 0): the whole input is gathered for the
    GEMM and again in backward, so only the slice is kept for it, as Megatron's
    column-parallel linear keeps it (the gathered input is TP times larger)."""

    @staticmethod
    def forward(ctx, x, master_weight, qweight: QuantizedWeight, shards=None):
        ctx.save_for_backward(x)
        ctx.qweight, ctx.shards = qweight, shards
        ctx.master_dtype = master_weight.dtype
        return ops.linear(x if shards is None else shards.gather(x), qweight)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        if ctx.shards is not None:
            x = ctx.shards.gather(x)
        need_x, need_w = ctx.needs_input_grad[:2]
        kernel = ops.linear_backward_op(ctx.qweight, grad_out.device)
        if kernel is not None:
            grad_x, grad_w = kernel(grad_out, x, ctx.qweight)
            grad_x = grad_x.to(x.dtype) if need_x else None
            grad_w = grad_w.to(ctx.master_dtype) if need_w else None
        else:
            grad_x = grad_w = None
            if need_x:
                grad_x = torch.matmul(grad_out.float(),
                                      _dequantized_operand(ctx.qweight)).to(x.dtype)
            if need_w:
                g2 = grad_out.reshape(-1, grad_out.shape[-1]).float()
                grad_w = (g2.t() @ x.reshape(-1, x.shape[-1]).float()).to(ctx.master_dtype)
        if grad_x is not None and ctx.shards is not None:
            grad_x = ctx.shards.reduce_scatter(grad_x)
        return grad_x, grad_w, None, None


class AlignedGroupedLinear(torch.autograd.Function):
    """MoE experts: rows of x are sorted by expert; one 2-D master per expert.

    The masters are separate inputs, not one [E, out, in] tensor, so no stacked copy of the
    experts' weights is made: each expert's grad_weight is computed and returned on its own.

    probs (fc2): y_r = p_r * (W x_r), so grad_x_r = p_r * W^T g_r, grad_p_r = <W^T g_r, x_r>,
    and grad_W = sum_r g_r (p_r x_r)^T: the GEMMs run on g and p * x, no extra GEMM.
    """

    @staticmethod
    def forward(ctx, x, qweight: QuantizedWeight, tokens_per_expert, probs, *masters):
        ctx.save_for_backward(x, tokens_per_expert, probs)
        ctx.qweight = qweight
        if len(masters) != len(tokens_per_expert):
            raise ValueError(f"{len(masters)} expert master weights for "
                             f"{len(tokens_per_expert)} experts in tokens_per_expert")
        ctx.master_dtypes = [m.dtype for m in masters]
        return ops.grouped_linear(x, qweight, tokens_per_expert, probs)

    @staticmethod
    def backward(ctx, grad_out):
        x, tokens_per_expert, probs = ctx.saved_tensors
        grad_x, grad_ws = _grouped_grads(ctx, grad_out, x, tokens_per_expert, probs)
        grad_p = None
        if probs is not None:  # grad_x is W^T g here, in fp32 or bf16
            if ctx.needs_input_grad[3]:
                grad_p = (grad_x.float() * x.float()).sum(-1).to(probs.dtype)
            grad_x = grad_x.float() * probs.float()[:, None]
        if ctx.needs_input_grad[0]:
            grad_x = grad_x.to(x.dtype)
        return (grad_x if ctx.needs_input_grad[0] else None, None, None, grad_p, *grad_ws)


def _grouped_grads(ctx, grad_out, x, tokens_per_expert, probs) -> tuple:
    """(W^T g per row, each expert's g_e^T (p_e x_e) in its master's dtype or None): the
    registered kernel (fused dequantize + grouped GEMMs, bf16 operands, fp32 accumulation) or
    the fp32 reference, one expert's dequantized weight at a time."""
    needed = ctx.needs_input_grad[4:]
    kernel = ops.grouped_backward_op(ctx.qweight, grad_out.device)
    if probs is not None:  # p x in x's dtype for the kernels, in fp32 for the reference
        scaled = x.float() * probs.float()[:, None]
        x = scaled.to(x.dtype) if kernel is not None else scaled
    if kernel is not None:
        grad_x, grad_w = kernel(grad_out, x, ctx.qweight, tokens_per_expert)
        return grad_x, [gw.to(dtype) if need else None
                        for gw, dtype, need in zip(grad_w, ctx.master_dtypes, needed)]
    counts = [int(c) for c in tokens_per_expert.tolist()]
    xs, gs = torch.split(x, counts), torch.split(grad_out, counts)
    parts = [g.float() @ _dequantized_operand(ctx.qweight[e]) for e, g in enumerate(gs) if len(g)]
    grad_x = torch.cat(parts) if parts else x.new_zeros(x.shape).float()
    return grad_x, [(g.float().t() @ xe.float()).to(dtype) if need else None
                    for g, xe, dtype, need in zip(gs, xs, ctx.master_dtypes, needed)]


def aligned_linear(x, master_weight, qweight: QuantizedWeight, shards=None):
    """shards: see AlignedLinear."""
    if not torch.is_grad_enabled():  # rollout decode, old logprobs: the forward op alone
        return ops.linear(x if shards is None else shards.gather(x), qweight)
    return AlignedLinear.apply(x, master_weight, qweight, shards)


def aligned_grouped_linear(x, master_weights, qweight: QuantizedWeight, tokens_per_expert,
                           probs=None):
    """master_weights: the experts' 2-D masters (a list), or one [E, out, in] tensor. probs:
    each row's router prob, applied to fc2's output (ops.grouped_linear).

    Without grad mode the op is called directly: autograd.Function.apply walks every input,
    and with one master per expert that cost ~250 us of host time per projection (measured in
    the embedded engine's decode, tools/profile_embedded_decode.py)."""
    if not torch.is_grad_enabled():
        return ops.grouped_linear(x, qweight, tokens_per_expert, probs)
    return AlignedGroupedLinear.apply(x, qweight, tokens_per_expert, probs, *master_weights)
