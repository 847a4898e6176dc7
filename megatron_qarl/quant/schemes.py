"""Scheme names as users type them (--rollout-quant) -> scheme objects."""
from .base import QuantScheme
from .errors import QuantizationError
from .fp8_block import FP8Block
from .int8 import Int8W8A8
from .none import NoQuant
from .w4a16 import GROUP_SIZES, W4A16

SCHEME_NAMES = tuple(f"w4a16-g{g}" for g in GROUP_SIZES) + ("w4a16", "fp8-block", "int8", "none")


def get_scheme(name: str) -> QuantScheme:
    """'w4a16' (group 128), 'w4a16-g64', 'fp8-block', 'int8' or 'none'."""
    if name == "none":
        return NoQuant()
    if name == "fp8-block":
        return FP8Block()
    if name == "int8":
        return Int8W8A8()
    if name == "w4a16":
        return W4A16(128)
    if name.startswith("w4a16-g") and name[len("w4a16-g"):].isdigit():
        return W4A16(int(name[len("w4a16-g"):]))
    raise QuantizationError(
        f"unknown quantization scheme {name!r}; choose one of {', '.join(SCHEME_NAMES)}"
    )
