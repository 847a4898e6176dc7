"""The RL trainer: flags and their validation, the loop, checkpoints, metrics."""
from .flags import build_parser
from .validation import FlagError, validate

__all__ = ["build_parser", "FlagError", "validate"]
