"""megatron-qarl: quantization-aligned RL for Megatron-Core MoE models (the QaRL paper)."""
import warnings

# megatron-core warns at import that TransformerEngine and Apex are missing; its torch
# fallbacks are what this package runs without them, so the warnings only bury our output.
# Set here, before any module of ours imports megatron.
warnings.filterwarnings("ignore", message=r".*(Transformer Engine|Apex).*")

__version__ = "0.1.0"
