"""Masked importance sampling: --mismatch-correction mis.

The paper's description of MIS (sec. 2.3, after Liu et al. 2025): reject samples with an
overly large mismatch weight and apply the sequence-level weight to the rest. The weight is
w = exp(mean_t log pi_old_learner - log pi_sampler), the geometric mean the paper uses for its
sequence-level weights; a sequence whose w leaves [--mis-ratio-low, --mis-ratio-high] is
masked out of the update, and a kept sequence's loss is multiplied by w. Works with every
objective except tbpo, which has its own weight. The default band [0.5, 2] is the band TBPO's
default cap c = 2 clips to: MIS rejects the sequences whose weight TBPO would clip.
"""
import torch
from torch import Tensor

from .numerics import exp_clamped


def mis_weight(seq_log_weight: Tensor, ratio_low: float,
               ratio_high: float) -> tuple[Tensor, Tensor]:
    """(w inside the band and 0 outside it, the keep mask); bounds included."""
    weight = exp_clamped(seq_log_weight)
    keep = (weight >= ratio_low) & (weight <= ratio_high)
    return torch.where(keep, weight, 0.0), keep
