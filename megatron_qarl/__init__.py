"""megatron-qarl: quantization-aligned RL for Megatron-Core MoE models (the QaRL paper)."""

__version__ = "0.1.0"
