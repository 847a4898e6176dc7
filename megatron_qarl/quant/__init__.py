"""Quantization core: the numbers every kernel, layer, engine and export must reproduce.

No Megatron import here (layer 1 of shared/ARCHITECTURE.md).
"""
from .base import QuantizedWeight, QuantScheme
from .errors import QuantizationError
from .fp8_block import FP8Block
from .int8 import Int8W8A8
from .none import NoQuant
from .schemes import SCHEME_NAMES, get_scheme
from .serving import from_serving, quantization_config, to_serving
from .ste import aligned_grouped_linear, aligned_linear
from .w4a16 import W4A16, pack_int4, unpack_int4

__all__ = [
    "QuantizedWeight", "QuantScheme", "QuantizationError", "W4A16", "FP8Block", "Int8W8A8",
    "NoQuant", "SCHEME_NAMES", "get_scheme", "to_serving", "from_serving",
    "quantization_config", "aligned_linear", "aligned_grouped_linear", "pack_int4",
    "unpack_int4",
]
