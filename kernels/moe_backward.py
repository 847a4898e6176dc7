"""Backward of the aligned (straight-through) grouped GEMMs, on bf16 tensor cores.

grad_input flows through the dequantized weight the forward used (bf16 operand, fp32
accumulation: megatron_qarl.quant.ste's numbers up to accumulation order; FP8's and INT8's
operands are rounded to bf16, see fp8_dequantize and int8_dequantize); grad_weight is the bf16
product grad_out_e^T @ x_e for the master weights. Both are torch._grouped_mm calls (no host
sync, no per-expert loop), but W4A16's grad_input at few rows per expert on Hopper: the
warp-specialized kernel dequantizes in shared memory there, where writing the whole bf16 operand
cost as much as the GEMM. The counts' shape and dtype are checked here as in the forward: the
ops are registered and callable on their own (too few counts read past them).
"""
import torch

from .checks import check_tokens_per_expert, counts_on
from .fp8_dequantize import fp8_dequantize
from .grouped_mm import grouped_mm, grouped_weight_grad
from .int8_gemm import int8_dequantize
from .w4a16_gemm import ws_route
from .w4a16_grouped_ws import applies_grad_input, w4a16_grouped_ws_grad_input
from .w4a16_operand import w4a16_operand


#: tokens per expert below which grad_input runs the warp-specialized kernel on the codes
#: (w4a16_grouped_ws_grad_input) instead of dequantize + torch._grouped_mm. H200, eager calls
#: (docs/kernel_rounds.md, round 38): 2.0-2.7x faster at 32-64 per expert (E128, TP2),
#: 1.3-1.6x at 256 (EP8 included), 0.99-1.25x at 512, 0.97-1.10x at 1024, 0.90-1.02x at 2048.
#: At EP8's few hundred rows a call is 23-60 us of GPU time and its eager launch about 50 us of
#: host time (launch_cache, round 39).
WS_GRAD_ROWS_PER_EXPERT = 2048


def w4a16_grouped_grad_input(grad_out: torch.Tensor, qweight,
                             tokens_per_expert: torch.Tensor) -> torch.Tensor:
    """grad_out [T, out] -> grad_x [T, in] = grad_out_e @ dequant(W_e), per expert."""
    grad_out = grad_out.to(torch.bfloat16)
    if grad_input_takes_ws(grad_out, qweight):
        return w4a16_grouped_ws_grad_input(grad_out, qweight,
                                           counts_on(grad_out.device, tokens_per_expert))
    weight = w4a16_operand(qweight, tokens_per_expert)  # [E, out, in], kept for the step or not
    return grouped_mm(grad_out, weight, tokens_per_expert)


def grad_input_takes_ws(grad_out: torch.Tensor, qweight) -> bool:
    """Under WS_GRAD_ROWS_PER_EXPERT rows per expert, no kept operand (torch._grouped_mm on it
    is bf16's speed), and the forward's rule for the kernel (w4a16_gemm.ws_route): a Hopper GPU,
    tensors it can read, lane-order codes it need not make inside a CUDA-graph capture."""
    per_expert = grad_out.shape[0] // qweight.data.shape[0]
    return (not qweight.keep_operand and per_expert < WS_GRAD_ROWS_PER_EXPERT
            and ws_route(grad_out, qweight, applies_grad_input))


def w4a16_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                           tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of the aligned W4A16 grouped GEMM: the quant.ops grouped-backward op."""
    check_tokens_per_expert(tokens_per_expert, qweight.data.shape[0], x.shape[0])
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
    check_tokens_per_expert(tokens_per_expert, qweight.data.shape[0], x.shape[0])
    return (grouped_mm(grad_out.to(torch.bfloat16), qweight.data, tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))


def fp8_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                         tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of the aligned FP8 block grouped GEMM: the quant.ops grouped-backward
    op (the pure-torch reference loops over experts in fp32 after a host sync)."""
    check_tokens_per_expert(tokens_per_expert, qweight.data.shape[0], x.shape[0])
    weight = fp8_dequantize(qweight, tokens_per_expert)
    return (grouped_mm(grad_out.to(torch.bfloat16), weight, tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))


def int8_grouped_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight,
                          tokens_per_expert: torch.Tensor) -> tuple:
    """(grad_x, grad_W) of the aligned INT8 grouped GEMM: the quant.ops grouped-backward op."""
    check_tokens_per_expert(tokens_per_expert, qweight.data.shape[0], x.shape[0])
    return (grouped_mm(grad_out.to(torch.bfloat16), int8_dequantize(qweight), tokens_per_expert),
            grouped_grad_weight(grad_out, x, tokens_per_expert))
