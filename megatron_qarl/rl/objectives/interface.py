"""The typed interface of an objective: LossInputs in, ObjectiveOutput out."""
from dataclasses import dataclass, field

from torch import Tensor

from .numerics import as_bool_mask, clean_logprobs


@dataclass(frozen=True)
class LossInputs:
    """fp32 [B, S] log-probabilities (0 at padding), per-sequence advantages, bool mask.

    logprobs carries the graph; old_logprobs (learner, weights of the rollout version) and
    sampler_logprobs (rollout engine) are detached constants.
    """

    logprobs: Tensor
    old_logprobs: Tensor
    sampler_logprobs: Tensor | None
    advantages: Tensor
    mask: Tensor

    @classmethod
    def prepare(
        cls,
        logprobs: Tensor,
        old_logprobs: Tensor,
        advantages: Tensor,
        response_mask: Tensor,
        sampler_logprobs: Tensor | None = None,
    ) -> "LossInputs":
        if logprobs.dim() != 2:
            raise ValueError(f"logprobs must be [batch, seq]: got shape {tuple(logprobs.shape)}")
        shape = logprobs.shape
        for name, tensor in (("old_logprobs", old_logprobs), ("response_mask", response_mask),
                             ("sampler_logprobs", sampler_logprobs)):
            if tensor is not None and tensor.shape != shape:
                raise ValueError(f"{name} must have the shape of logprobs {tuple(shape)}: "
                                 f"got {tuple(tensor.shape)}")
        if advantages.shape != shape[:1]:
            raise ValueError(f"advantages must be one value per sequence, shape ({shape[0]},): "
                             f"got {tuple(advantages.shape)}")
        mask = as_bool_mask(response_mask)
        return cls(
            logprobs=clean_logprobs(logprobs, mask),
            old_logprobs=clean_logprobs(old_logprobs.detach(), mask),
            sampler_logprobs=None if sampler_logprobs is None
            else clean_logprobs(sampler_logprobs.detach(), mask),
            advantages=advantages.detach().float(),
            mask=mask,
        )


@dataclass
class ObjectiveOutput:
    """Per-token loss [B, S] (0 at padding and wherever the objective masked) and metrics."""

    token_loss: Tensor
    metrics: dict[str, Tensor] = field(default_factory=dict)
