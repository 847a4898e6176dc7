"""Backward of the aligned (straight-through) dense GEMMs on bf16 tensor cores, in
moe_backward's numbers: grad_input through the dequantized weight rounded to bf16 (exact for
W4A16's operand), grad_weight the bf16 product grad_out^T @ x, both accumulated in fp32. The
pure-torch reference (quant.ste) multiplies in fp32 on CUDA cores: on the H200 its GEMMs were
a sixth of a quantized qwen3-moe-200m step's GPU time (docs/kernel_rounds.md, round 42).
"""
import torch

from megatron_qarl.quant import FP8Block, Int8W8A8, W4A16

from .fp8_dequantize import fp8_dequantize
from .int8_gemm import int8_dequantize
from .w4a16_operand import w4a16_operand

#: each scheme's bf16 grad_input operand (W4A16's is the forward's when kept for the step)
_OPERAND = {W4A16: lambda qweight: w4a16_operand(qweight, None), FP8Block: fp8_dequantize,
            Int8W8A8: int8_dequantize}


def aligned_linear_backward(grad_out: torch.Tensor, x: torch.Tensor, qweight) -> tuple:
    """(grad_x [..., in] bf16, grad_W [out, in] bf16): the quant.ops linear-backward op."""
    g = grad_out.reshape(-1, grad_out.shape[-1]).to(torch.bfloat16)
    grad_x = g @ _OPERAND[type(qweight.scheme)](qweight)
    grad_w = g.t() @ x.reshape(-1, x.shape[-1]).to(torch.bfloat16)
    return grad_x.view(*grad_out.shape[:-1], grad_x.shape[-1]), grad_w
