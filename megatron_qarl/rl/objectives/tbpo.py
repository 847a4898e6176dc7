"""TBPO, Trust Band Policy Optimization (QaRL paper Section 3.2, Appendix E): --loss tbpo.

Each response is one action. Over its response tokens:
    r = exp(mean_t log pi_theta - mean_t log pi_old_learner)         sequence proximal ratio
    w = exp(clip(mean_t log pi_old_learner - mean_t log pi_sampler,
                 -log c, log c))                                      mismatch weight, detached
Trust band: A > 0 keeps r in [0, 1 + eps_h]; A < 0 keeps r in [1 - delta_l, 1 + delta_h]
(dual-sided, so an error-token burst that inflates r is caught too). A sequence outside its
band is masked out of the update (loss 0, gradient 0), not clipped to the bound. A kept
sequence's surrogate w * r * A is shared by every one of its tokens: token loss = -w r A,
then aggregated by --loss-agg-mode. A = 0 sequences are kept and contribute nothing.
Flags: --seq-clip-ratio-high (eps_h), --neg-seq-clip-ratio-low (delta_l),
--neg-seq-clip-ratio-high (delta_h), --seq-tis-imp-ratio-cap (c).
"""
import math

import torch

from .config import TBPOConfig
from .interface import LossInputs, ObjectiveOutput
from .numerics import exp_clamped, masked_mean, sequence_mean


def tbpo_loss(inputs: LossInputs, cfg: TBPOConfig) -> ObjectiveOutput:
    """inputs.sampler_logprobs must be set (compute_policy_loss checks it)."""
    mask = inputs.mask
    # Mean of the per-token differences: the same value as the difference of means, without
    # cancelling two large sums.
    seq_ratio = exp_clamped(sequence_mean(inputs.logprobs - inputs.old_logprobs, mask))
    log_cap = math.log(cfg.seq_tis_imp_ratio_cap)
    seq_log_w = sequence_mean(inputs.old_logprobs - inputs.sampler_logprobs, mask)
    weight = torch.exp(seq_log_w.clamp(-log_cap, log_cap))

    advantages = inputs.advantages
    positive, negative = advantages > 0, advantages < 0
    ratio_value = seq_ratio.detach()
    above_positive_bound = positive & (ratio_value > 1.0 + cfg.seq_clip_ratio_high)
    below_negative_band = negative & (ratio_value < 1.0 - cfg.neg_seq_clip_ratio_low)
    above_negative_band = negative & (ratio_value > 1.0 + cfg.neg_seq_clip_ratio_high)
    outside_band = above_positive_bound | below_negative_band | above_negative_band
    seq_loss = torch.where(outside_band, 0.0, -weight * seq_ratio * advantages)

    has_tokens = mask.any(dim=-1)
    metrics = {
        "masked_seq_frac": masked_mean(outside_band.float(), has_tokens),
        "seq_masked_frac_pos_high": masked_mean(above_positive_bound.float(), has_tokens),
        "seq_masked_frac_neg_low": masked_mean(below_negative_band.float(), has_tokens),
        "seq_masked_frac_neg_high": masked_mean(above_negative_band.float(), has_tokens),
        "seq_mismatch_weight_mean": masked_mean(weight, has_tokens),
        "seq_mismatch_weight_clipfrac": masked_mean((seq_log_w.abs() > log_cap).float(), has_tokens),
    }
    return ObjectiveOutput(torch.where(mask, seq_loss[:, None], 0.0), metrics)
