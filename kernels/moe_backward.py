"""Backward of the aligned (straight-through) grouped GEMMs, on bf16 tensor cores.

grad_input flows through the dequantized weight the forward used (bf16 operand, fp32
accumulation: megatron_qarl.quant.ste's numbers up to accumulation order; FP8's and INT8's
operands are rounded to bf16, see fp8_dequantize and int8_dequantize); grad_weight is the bf16
product grad_out_e^T @ x_e for the master weights. Both are torch._grouped_mm calls: no host
sync, no per-expert loop.
"""
import torch

from .fp8_dequantize import fp8_dequantize
from .grouped_mm import grouped_mm, grouped_weight_grad
from .int8_gemm import int8_dequantize
from .w4a16_operand import w4a16_operand


def w4a16_grouped_grad_input(grad_out: torch.Tensor, qweight,
                             tokens_per_expert: torch.Tensor) -> torch.Tensor:
    """grad_out [T, out] -> grad_x [T, in] = grad_out_e @ dequant(W_e), per expert."""
    weight = w4a16_operand(qweight, tokens_per_expert)  # [E, out, in], kept for the step or not
    return grouped_mm(grad_out.to(torch.bfloat16), weight, tokens_per_expert)


def w4a16_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                           tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of the aligned W4A16 grouped GEMM: the quant.ops grouped-backward op."""
    return (w4a16_grouped_grad_input(grad_out, qweight, tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))


def grouped_grad_weight(grad_out: torch.Tensor, x: torch.Tensor,
                        tokens_per_expert: torch.Tensor) -> torch.Tensor:
    """grad_W [E, out, in] in bf16 (zeros for experts without tokens)."""
    return grouped_weight_grad(grad_out.to(torch.bfloat16), x.to(torch.bfloat16),
                               tokens_per_expert)


def bf16_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                          tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of scheme 'none' grouped experts (bf16 weights: the true gradient)."""
    return (grouped_mm(grad_out.to(torch.bfloat16), qweight.data, tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))


def fp8_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                         tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of the aligned FP8 block grouped GEMM: the quant.ops grouped-backward
    op (the pure-torch reference loops over experts in fp32 after a host sync)."""
    weight = fp8_dequantize(qweight, tokens_per_expert)
    return (grouped_mm(grad_out.to(torch.bfloat16), weight, tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))


def int8_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                          tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of the aligned INT8 grouped GEMM: the quant.ops grouped-backward op."""
    return (grouped_mm(grad_out.to(torch.bfloat16), int8_dequantize(qweight), tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))
