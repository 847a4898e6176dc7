"""Megatron layers running the aligned quantized forward (layer 3 of ARCHITECTURE.md)."""
from .cuda_ops import enable_cuda_kernels
from .experts import QuantizedGroupedExperts
from .export import QuantizedTensor, iter_quantized_weights
from .hooks import install_quant_refresh_hook, invalidate_quantized_weights, quantized_modules
from .layout import validate_model
from .linear import QuantColumnParallelLinear, QuantRowParallelLinear
from .router_probs import keep_router_probs_fp32
from .spec import TARGETS, parse_targets, qarl_block_spec
from .token_dispatch import configure_token_dispatchers
from .weight_cache import QuantizedWeightCache

__all__ = [
    "enable_cuda_kernels", "QuantizedGroupedExperts", "configure_token_dispatchers",
    "keep_router_probs_fp32",
    "QuantColumnParallelLinear",
    "QuantRowParallelLinear",
    "QuantizedTensor", "iter_quantized_weights", "install_quant_refresh_hook",
    "invalidate_quantized_weights", "quantized_modules", "validate_model", "TARGETS",
    "parse_targets", "qarl_block_spec", "QuantizedWeightCache",
]
