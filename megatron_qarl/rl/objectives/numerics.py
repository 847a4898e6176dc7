"""Mask-safe fp32 helpers shared by every objective.

Padding may hold -inf, -1e30 or NaN (rollout engines fill it that way) and long responses
push sums far from zero, so every objective reads its inputs through these helpers: values
are selected with torch.where (never multiplied by a 0/1 mask, since 0 * inf = NaN) and
log-ratios are clamped before exp.
"""
from contextlib import contextmanager
from contextvars import ContextVar

import torch
import torch.distributed as dist
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


#: (process group,) whose ranks the masked reductions below span, or None: this rank's alone
_REDUCED_OVER: ContextVar = ContextVar("reduced_over", default=None)


@contextmanager
def reduced_over(group):
    """Within it masked_mean / masked_max / masked_min are over the values of every rank of
    `group` (a torch.distributed group; None: the world): each all-reduces its sums and count,
    or its extreme, so a statistic of all ranks' tokens costs one small collective, not a
    gather of them. Every rank must make the same calls in the same order."""
    token = _REDUCED_OVER.set((group, ))
    try:
        yield
    finally:
        _REDUCED_OVER.reset(token)


def _across_ranks(stats: Tensor, op) -> Tensor:
    reduced = _REDUCED_OVER.get()
    if reduced is not None:
        dist.all_reduce(stats, op=op, group=reduced[0])
    return stats


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of values where mask holds (any shape); 0 when nothing is selected."""
    total = torch.where(mask, values.float(), 0.0).sum()
    if _REDUCED_OVER.get() is None:
        return total / mask.sum().clamp(min=1).float()
    # fp64: counts of a step's tokens pass 2^24
    total, count = _across_ranks(torch.stack([total.double(), mask.sum().double()]),
                                 dist.ReduceOp.SUM)
    return (total / count.clamp(min=1)).float()


def masked_max(values: Tensor, mask: Tensor) -> Tensor:
    """Max where mask holds; 0 when nothing is selected (no host sync)."""
    return _masked_extreme(values, mask, 1.0)


def masked_min(values: Tensor, mask: Tensor) -> Tensor:
    """Min where mask holds; 0 when nothing is selected (no host sync)."""
    return _masked_extreme(values, mask, -1.0)


def _masked_extreme(values: Tensor, mask: Tensor, sign: float) -> Tensor:
    """sign * the max of sign * values where mask holds (0 when nothing is selected, NaN when
    a NaN is); over ranks one max of (that max without NaN, whether any value is selected,
    whether a NaN is): a collective's max need not keep a NaN (gloo's dropped it)."""
    best = torch.where(mask, sign * values.float(), -torch.inf).max()
    nan = best.isnan()
    best, selected, nan = _across_ranks(
        torch.stack([torch.where(nan, -torch.inf, best), mask.any().float(), nan.float()]),
        dist.ReduceOp.MAX)
    return torch.where(nan > 0, torch.nan, torch.where(selected > 0, sign * best, 0.0))


def exp_clamped(log_ratio: Tensor) -> Tensor:
    """exp of a log-ratio clamped to +-LOG_RATIO_LIMIT (gradient 0 beyond the clamp)."""
    return torch.exp(log_ratio.clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT))
