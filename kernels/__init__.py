"""Triton kernels for the aligned forward/backward (import name `qarl_kernels`).

Every kernel reproduces a pure-torch reference in `megatron_qarl.quant`: bit for bit where the
reference is exact (quantize-and-pack, FP8 activation quantization), to fp32-accumulation
tolerance for GEMMs. Nothing here imports Megatron; `register.register_cuda_kernels()` plugs
the kernels into `megatron_qarl.quant.ops` for CUDA tensors.

Where things are:
- W4A16: w4a16_quantize (quantize-and-pack), w4a16_gemm (the Triton GEMM and the routes that
  pick a kernel per call), w4a16_gemv (one token), w4a16_gluon with w4a16_gluon_rules and
  w4a16_lanes (Hopper, decode sizes), w4a16_grouped_ws (Hopper, training sizes and
  grad_input), w4a16_dequantize and w4a16_operand (the bf16 operand).
- FP8 block: fp8_quantize (weights, activations, the FP8-writing SwiGLU), fp8_gemm,
  fp8_grouped_ws (Hopper, large batches), fp8_dequantize. INT8 W8A8: int8_quantize,
  int8_gemm. Scheme none: bf16_quantize.
- Backward: moe_backward (grouped), linear_backward (dense).
- The rest of a MoE layer and the sampler: swiglu, routed_sum, race_argmax, token_logprobs,
  write_rows (the KV cache).
- Shared pieces: checks, numerics, expert_masters, expert_tiles, split_k, pdl, grouped_mm,
  gluon_hopper, launch_cache.
- Measuring: bench/ (`python -m qarl_kernels.bench`), tune, profile_case, stream_floor.
"""
