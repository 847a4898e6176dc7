"""Triton kernels for the aligned forward/backward (import name `qarl_kernels`).

Every kernel reproduces a pure-torch reference in `megatron_qarl.quant`: bit for bit where the
reference is exact (quantize-and-pack, FP8 activation quantization), to fp32-accumulation
tolerance for GEMMs. Nothing here imports Megatron; `register.register_cuda_kernels()` plugs
the kernels into `megatron_qarl.quant.ops` for CUDA tensors.
"""
