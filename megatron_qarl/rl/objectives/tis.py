"""Truncated importance sampling: --mismatch-correction tis (one-sided) and tis2 (two-sided).

The rollout engine samples from pi_sampler, the loss is built on pi_old_learner; the
importance weight w = pi_old_learner / pi_sampler corrects for that and is truncated to
bound its variance: tis uses min(w, C) (Yao et al. 2025), tis2 uses clip(w, 1/C, C) (the
form of TBPO's eq. 5, which also stops tokens the learner finds much less likely than the
sampler from being weighted towards 0). The weight is a detached constant and multiplies the
objective's loss. Its granularity follows the objective: per token for grpo/dapo/dual_clip,
per sequence (geometric mean over response tokens) for gspo.
"""
import math

import torch
from torch import Tensor

from .numerics import LOG_RATIO_LIMIT, sequence_mean


def truncated_weight(log_weight: Tensor, cap: float, two_sided: bool) -> tuple[Tensor, Tensor]:
    """exp(log_weight) truncated at cap (and at 1/cap when two_sided), and where it was. The
    one-sided weight's floor at exp(-LOG_RATIO_LIMIT) keeps exp finite and truncates nothing
    that counts (it was reported as truncation: tokens the learner finds nearly impossible)."""
    log_cap = math.log(cap)
    low = -log_cap if two_sided else -LOG_RATIO_LIMIT
    truncated = (log_weight > log_cap) | (log_weight < low) if two_sided else log_weight > log_cap
    return torch.exp(log_weight.clamp(low, log_cap)), truncated


def token_log_mismatch(old_logprobs: Tensor, sampler_logprobs: Tensor, mask: Tensor) -> Tensor:
    """log(pi_old_learner / pi_sampler) per token [B, S], 0 at padding."""
    return torch.where(mask, old_logprobs - sampler_logprobs, 0.0)


def sequence_log_mismatch(old_logprobs: Tensor, sampler_logprobs: Tensor, mask: Tensor) -> Tensor:
    """log of the sequence mismatch weight (geometric mean over response tokens) [B]."""
    return sequence_mean(old_logprobs - sampler_logprobs, mask)
