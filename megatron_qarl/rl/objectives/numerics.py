"""Mask-safe fp32 helpers shared by every objective.

Padding may hold -inf, -1e30 or NaN (rollout engines fill it that way) and long responses
push sums far from zero, so every objective reads its inputs through these helpers: values
are selected with torch.where (never multiplied by a 0/1 mask, since 0 * inf = NaN) and
log-ratios are clamped before exp.
"""
import torch
from torch import Tensor

# exp(20) ~ 4.9e8 stays finite in fp32 even when multiplied by an advantage and summed over
# 16k tokens. Where an objective leaves the ratio unbounded (grpo, dapo and gspo when A < 0)
# this clamp is the bound: past it the loss is constant and the gradient zero, an implicit
# dual clip at exp(20).
LOG_RATIO_LIMIT = 20.0
# No softmax over a real vocabulary gives a log-probability this low; flooring here keeps
# differences of two "-inf" entries finite instead of NaN.
LOGPROB_FLOOR = -1.0e4


def as_bool_mask(response_mask: Tensor) -> Tensor:
    """Accept bool or 0/1 float/int masks."""
    return response_mask if response_mask.dtype == torch.bool else response_mask != 0


def clean_logprobs(logprobs: Tensor, mask: Tensor) -> Tensor:
    """fp32 log-probabilities, floored at valid positions and exactly 0 at padding."""
    return torch.where(mask, logprobs.float().clamp(min=LOGPROB_FLOOR), 0.0)


def sequence_lengths(mask: Tensor) -> Tensor:
    """Response tokens per sequence, fp32 [B]."""
    return mask.sum(dim=-1).float()


def sequence_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean over each sequence's response tokens [B]; 0 for a sequence without any."""
    total = torch.where(mask, values, 0.0).sum(dim=-1)
    return total / sequence_lengths(mask).clamp(min=1.0)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of values where mask holds (any shape); 0 when nothing is selected."""
    total = torch.where(mask, values.float(), 0.0).sum()
    return total / mask.sum().clamp(min=1).float()


def masked_max(values: Tensor, mask: Tensor) -> Tensor:
    """Max where mask holds; 0 when nothing is selected (no host sync)."""
    best = torch.where(mask, values.float(), -torch.inf).max()
    return torch.where(mask.any(), best, 0.0)


def masked_min(values: Tensor, mask: Tensor) -> Tensor:
    """Min where mask holds; 0 when nothing is selected (no host sync)."""
    best = torch.where(mask, values.float(), torch.inf).min()
    return torch.where(mask.any(), best, 0.0)


def exp_clamped(log_ratio: Tensor) -> Tensor:
    """exp of a log-ratio clamped to +-LOG_RATIO_LIMIT (gradient 0 beyond the clamp)."""
    return torch.exp(log_ratio.clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT))
