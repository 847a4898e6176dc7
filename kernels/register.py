"""Plug the CUDA kernels into megatron_qarl.quant.ops, replacing the pure-torch reference for
CUDA tensors of the W4A16, FP8 block and INT8 W8A8 schemes, of scheme 'none' grouped experts
(torch._grouped_mm), and of the MoE combine's routed sums, the KV cache's row writes, the
sampler's draw and the experts' SwiGLU in training; CPU tensors keep the reference."""
from megatron_qarl.quant import FP8Block, Int8W8A8, NoQuant, W4A16, ops

from .bf16_quantize import bf16_quantize
from .fp8_gemm import fp8_block_grouped_linear, fp8_block_linear, fp8_swiglu_experts
from .fp8_quantize import fp8_block_quantize, fp8_quantize_packed_rows
from .grouped_mm import bf16_grouped_linear
from .int8_gemm import int8_grouped_linear, int8_linear, int8_swiglu_experts
from .int8_quantize import int8_quantize, int8_quantize_packed_rows
from .linear_backward import aligned_linear_backward
from .moe_backward import (bf16_grouped_backward, fp8_grouped_backward, int8_grouped_backward,
                           w4a16_grouped_backward)
from .race_argmax import race_argmax
from .routed_sum import routed_sum
from .swiglu import gated_silu
from .token_logprobs import sample_with_logprobs, token_logprobs_backward, token_logprobs_forward
from .w4a16_gemm import w4a16_grouped_linear, w4a16_linear, w4a16_swiglu_experts
from .w4a16_quantize import w4a16_quantize
from .write_rows import write_rows


def register_cuda_kernels() -> None:
    """Idempotent; call once before building quantized layers (needs Triton and a CUDA GPU
    only when the ops run)."""
    ops.register_linear(W4A16, "cuda", w4a16_linear)
    ops.register_grouped(W4A16, "cuda", w4a16_grouped_linear)
    ops.register_linear(FP8Block, "cuda", fp8_block_linear)
    ops.register_grouped(FP8Block, "cuda", fp8_block_grouped_linear)
    ops.register_quantize(W4A16, "cuda", w4a16_quantize)
    ops.register_quantize(FP8Block, "cuda", fp8_block_quantize)
    for scheme in (W4A16, FP8Block, Int8W8A8):
        ops.register_linear_backward(scheme, "cuda", aligned_linear_backward)
    ops.register_grouped_backward(W4A16, "cuda", w4a16_grouped_backward)
    ops.register_grouped_backward(FP8Block, "cuda", fp8_grouped_backward)
    ops.register_swiglu_experts(W4A16, "cuda", w4a16_swiglu_experts)
    ops.register_swiglu_experts(FP8Block, "cuda", fp8_swiglu_experts)
    ops.register_dispatch_quantizer(FP8Block, "cuda", fp8_quantize_packed_rows)
    ops.register_linear(Int8W8A8, "cuda", int8_linear)
    ops.register_quantize(Int8W8A8, "cuda", int8_quantize)
    ops.register_grouped(Int8W8A8, "cuda", int8_grouped_linear)
    ops.register_grouped_backward(Int8W8A8, "cuda", int8_grouped_backward)
    ops.register_swiglu_experts(Int8W8A8, "cuda", int8_swiglu_experts)
    ops.register_dispatch_quantizer(Int8W8A8, "cuda", int8_quantize_packed_rows)
    ops.register_grouped(NoQuant, "cuda", bf16_grouped_linear)
    ops.register_quantize(NoQuant, "cuda", bf16_quantize)
    ops.register_grouped_backward(NoQuant, "cuda", bf16_grouped_backward)
    ops.register_routed_sum("cuda", routed_sum)
    ops.register_write_rows("cuda", write_rows)
    ops.register_race_argmax("cuda", race_argmax)
    ops.register_gated_activation("cuda", gated_silu)
    ops.register_token_logprobs("cuda", ops.TokenLogprobOps(
        token_logprobs_forward, token_logprobs_backward, sample_with_logprobs))
