"""The embedded rollout engine: in-process batched generation with Megatron's KV cache."""
from .engine import EmbeddedEngine
from .sampling import sample_next

__all__ = ["EmbeddedEngine", "sample_next"]
