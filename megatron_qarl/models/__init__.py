"""Qwen3-MoE presets and the entry point that builds a QaRL Megatron model."""
from .builder import build_model
from .presets import PRESETS, QWEN3_30B_A3B, QWEN3_MOE_200M, QWEN3_MOE_TINY, Qwen3MoEPreset, \
    get_preset

__all__ = ["build_model", "PRESETS", "QWEN3_30B_A3B", "QWEN3_MOE_200M", "QWEN3_MOE_TINY",
           "Qwen3MoEPreset", "get_preset"]
