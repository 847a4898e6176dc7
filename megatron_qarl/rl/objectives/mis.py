"""Masked importance sampling: --mismatch-correction mis.

A sequence whose mismatch weight w = exp(mean_t log pi_old_learner - log pi_sampler) (the
geometric mean, as in TBPO) leaves [--mis-ratio-low, --mis-ratio-high] is masked out of the
update: rejected, not reweighted; kept sequences keep weight 1. Works with every objective
except tbpo, which has its own weight. The default band [0.5, 2] is the band TBPO's default
cap c = 2 clips to, so MIS masks exactly the sequences TBPO would clip the weight of.
"""
from torch import Tensor

from .numerics import exp_clamped


def mis_keep_mask(seq_log_weight: Tensor, ratio_low: float, ratio_high: float) -> Tensor:
    """True for sequences whose mismatch weight lies inside the band (bounds included)."""
    weight = exp_clamped(seq_log_weight)
    return (weight >= ratio_low) & (weight <= ratio_high)
