"""Plug the CUDA forward ops into the quant.ops registry for CUDA tensors.

Precedence for FP8Block: TransformerEngine's blockwise GEMM (te_fp8.py) > the Triton kernels
(`qarl_kernels`, kernels/) > the pure-torch reference; for the other schemes: Triton >
reference. Each is guarded by availability; the reference defines the numbers either way. The
FP8 choice (and why TE was not taken) is logged once.
"""
from __future__ import annotations

import functools
import importlib.util
import logging
from typing import Optional

from ..quant import FP8Block, ops
from ..quant.fp8_block import quantize_activation
from .te_fp8 import TEFP8BlockOps, te_fp8_unavailable_reason

log = logging.getLogger(__name__)

TE, TRITON, REFERENCE = "transformer_engine", "triton", "reference"


def fp8_backend(te_unavailable: Optional[str], triton_active: bool) -> str:
    """TE when usable (no reason against it), else Triton when registered, else reference."""
    if te_unavailable is None:
        return TE
    return TRITON if triton_active else REFERENCE


@functools.lru_cache(maxsize=None)
def announce_fp8_backend(backend: str, te_unavailable: Optional[str]) -> None:
    """One log line per distinct choice (build_model may run many times in a process)."""
    why = "" if te_unavailable is None else f" (TransformerEngine not used: {te_unavailable})"
    log.info("FP8Block forward GEMMs on CUDA: %s%s", backend, why)


def _register_triton() -> bool:
    if (importlib.util.find_spec("qarl_kernels") is None
            or importlib.util.find_spec("qarl_kernels.register") is None):
        return False
    from qarl_kernels.register import register_cuda_kernels

    register_cuda_kernels()
    return True


def _fp8_fallbacks(triton_active: bool) -> tuple:
    """(linear, grouped, activation quantizer) for what TE cannot take."""
    if triton_active:
        from qarl_kernels.fp8_gemm import fp8_block_grouped_linear, fp8_block_linear
        from qarl_kernels.fp8_quantize import fp8_quantize_activation

        return fp8_block_linear, fp8_block_grouped_linear, fp8_quantize_activation

    def reference_linear(x, qweight):
        return qweight.scheme.reference_matmul(x, qweight)

    def reference_grouped(x, qweight, tokens_per_expert, probs=None):
        return qweight.scheme.reference_grouped_matmul(x, qweight, tokens_per_expert, probs)

    return reference_linear, reference_grouped, quantize_activation


@functools.lru_cache(maxsize=None)
def enable_cuda_kernels() -> bool:
    """Register the CUDA ops once per process; True when the Triton kernels are active (FP8Block
    may additionally run on TransformerEngine: see the log line). build_model calls it for every
    model: once, so that an op registered since (a test's, an A/B script's, a user's own) is the
    one the next model runs."""
    triton_active = _register_triton()
    te_unavailable = te_fp8_unavailable_reason()
    backend = fp8_backend(te_unavailable, triton_active)
    if backend == TE:
        te_ops = TEFP8BlockOps(*_fp8_fallbacks(triton_active))
        ops.register_linear(FP8Block, "cuda", te_ops.linear)
        ops.register_grouped(FP8Block, "cuda", te_ops.grouped)
        # the no-grad experts then run TE's grouped GEMM too (not the Triton-fused one), on
        # bf16 tokens
        ops.register_swiglu_experts(FP8Block, "cuda", ops.composed_swiglu_experts)
        ops.register_dispatch_quantizer(FP8Block, "cuda", None)
    announce_fp8_backend(backend, te_unavailable)
    return triton_active
