"""Plug the Triton kernels (the `qarl_kernels` package, kernels/) into the quant.ops registry
for CUDA tensors. Guarded: without Triton or before the kernels exist, the layers keep the
pure-torch reference ops, which define the numbers either way."""
from __future__ import annotations

import importlib.util


def enable_cuda_kernels() -> bool:
    """Register the kernels once; True when they are now active."""
    if (importlib.util.find_spec("qarl_kernels") is None
            or importlib.util.find_spec("qarl_kernels.register") is None):
        return False
    from qarl_kernels.register import register_cuda_kernels

    register_cuda_kernels()
    return True
