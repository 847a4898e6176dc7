"""A torch RMSNorm/LayerNorm for Megatron specs that works with sequence parallelism.

Megatron's `WrappedTorchNorm` (the local spec's norm when TE is missing) asserts
`not config.sequence_parallel`, yet MoE training with TP>1 requires sequence parallelism.
A norm is pointwise over tokens, so it needs nothing from sequence parallelism except that
its weight gradient is summed over the TP group: `finalize_model_grads` does that for
parameters marked `sequence_parallel`, which this builder sets. It returns the plain torch
module (as `WrappedTorchNorm` does) so parameter names stay `<norm>.weight`.
"""
from __future__ import annotations

import torch

_NORMS = {"RMSNorm": torch.nn.RMSNorm, "LayerNorm": torch.nn.LayerNorm}


class TorchNorm:
    """Spec-compatible: `build_module` calls `TorchNorm(config=, hidden_size=, eps=)`."""

    def __new__(cls, config, hidden_size: int, eps: float = 1e-5, **_unused_te_args):
        if config.normalization not in _NORMS:
            raise ValueError(
                f"normalization {config.normalization!r} is not supported without "
                f"TransformerEngine; use --normalization RMSNorm or LayerNorm"
            )
        if config.layernorm_zero_centered_gamma:  # x/rms * (1 + w): a torch norm takes w
            raise ValueError(
                "layernorm_zero_centered_gamma: this model's norms are torch's, which scale by "
                "w, not 1 + w (Qwen3 uses plain weights); unset it in the model's config")
        on_gpu = torch.cuda.is_available() and not config.use_cpu_initialization
        device = torch.cuda.current_device() if on_gpu else "cpu"
        norm = _NORMS[config.normalization](
            hidden_size, eps=eps, dtype=config.params_dtype, device=device
        )
        for param in norm.parameters():
            setattr(param, "sequence_parallel", config.sequence_parallel)
        return norm
