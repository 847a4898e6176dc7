"""Fixes megatron-core 0.16.1 needs on machines without TransformerEngine or Apex (CPU CI and
the GPU machine here alike). Each fix says why; all are idempotent."""
from __future__ import annotations

import importlib.util

HAVE_TE = importlib.util.find_spec("transformer_engine") is not None
#: Apex's fused CUDA extensions (the plain `apex` package without them does not count)
HAVE_APEX = importlib.util.find_spec("fused_weight_gradient_mlp_cuda") is not None

#: TransformerConfig flags that select fused kernels from Apex/TE; off when neither exists.
FUSION_FLAGS = (
    "masked_softmax_fusion",
    "gradient_accumulation_fusion",
    "apply_rope_fusion",
    "bias_activation_fusion",
)


def apply_megatron_fixes() -> None:
    """0.16.1's moe_utils imports `te_general_gemm` inside a try block and leaves the name
    undefined when TE is missing, so every MoE router forward raises NameError (fixed in 0.19).
    None is the value its own code tests for to take the torch path."""
    from megatron.core.transformer.moe import moe_utils

    if not hasattr(moe_utils, "te_general_gemm"):
        moe_utils.te_general_gemm = None


def disable_unavailable_fusions(config_kwargs: dict) -> dict:
    """Turn off the fused-kernel flags when neither TE nor Apex can serve them: with them on,
    Megatron raises at construction (gradient accumulation fusion) or at the first forward."""
    if HAVE_TE or HAVE_APEX:
        return dict(config_kwargs)
    return {**config_kwargs, **{flag: False for flag in FUSION_FLAGS}}
