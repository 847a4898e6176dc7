"""Rollout engines: one interface, an embedded in-process engine and an SGLang bridge."""
from .base import RolloutEngine, Sample, SamplingParams

__all__ = ["RolloutEngine", "Sample", "SamplingParams"]
