"""The one interface the trainer sees for generation: embedded (in-process) or SGLang."""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

import torch


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1  # -1: no top-k
    max_new_tokens: int = 256
    stop_token_ids: Sequence[int] = ()
    n: int = 1  # samples per prompt

    def __post_init__(self):
        if not self.temperature > 0:
            raise ValueError(f"--rollout-temperature must be > 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"--rollout-top-p must be in (0, 1], got {self.top_p}")
        if self.top_k == 0 or self.top_k < -1:
            raise ValueError(f"--rollout-top-k must be -1 (off) or >= 1, got {self.top_k}")
        if self.max_new_tokens < 1:
            raise ValueError(f"--rollout-max-new-tokens must be >= 1, got {self.max_new_tokens}")
        if self.n < 1:
            raise ValueError(f"--n-samples-per-prompt must be >= 1, got {self.n}")


@dataclass
class Sample:
    """One response. sampler_logprobs[t] is log p(response_ids[t]) under the sampler's
    temperature-scaled distribution (what SGLang returns), one per response token."""

    prompt_ids: List[int]
    response_ids: List[int]
    sampler_logprobs: List[float]
    finish_reason: str  # "stop" | "length" | "abort"
    weight_version: int = 0
    # [len(prompt)+len(response)-1, layers, top_k] expert ids when routing replay is on
    routed_experts: Optional[torch.Tensor] = None
    meta: dict = field(default_factory=dict)


def require_tokens(prompts: List[List[int]]) -> None:
    """A response continues its prompt's last token: an empty prompt has none to continue
    (the embedded engine failed on a reshape deep in attention)."""
    for i, prompt in enumerate(prompts):
        if len(prompt) == 0:
            raise ValueError(f"prompt {i} has no tokens; each prompt needs at least one (a BOS "
                             f"or template token) for the response to follow")


class RolloutEngine(abc.ABC):
    """Samples responses with weights of a known version; receives new weights after each step."""

    weight_version: int = 0

    @abc.abstractmethod
    def generate(self, prompts: List[List[int]], params: SamplingParams) -> List[List[Sample]]:
        """params.n samples per prompt, grouped per prompt in input order."""

    @abc.abstractmethod
    def publish_weights(self, model: torch.nn.Module, version: int) -> None:
        """Make the learner's cached quantized weights the engine's, as `version`."""

    def release_memory(self) -> None:
        """Colocated engines free weights/KV before training (no-op where nothing is held)."""

    def resume_memory(self) -> None:
        """Undo release_memory before the next rollout."""

    def shutdown(self) -> None:
        """Stop servers/threads this engine started."""

    def state_dict(self) -> dict:
        """Sampler state held in this process, checkpointed with the run (the embedded
        engine's RNG); remote engines hold none."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore what state_dict returned."""
