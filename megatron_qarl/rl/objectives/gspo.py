"""GSPO (Zheng et al. 2025): --loss gspo.

The sequence ratio is the geometric mean s = exp(mean_t (log pi_theta - log pi_old)) over
the response tokens, clipped PPO-style at the sequence level:
    loss = max(-A s, -A clip(s, 1 - seq_clip_ratio_low, 1 + seq_clip_ratio_high)),
shared by every token of the sequence. Unlike TBPO, a sequence past its bound is clipped
(it keeps its loss value with zero gradient) and A < 0 has no upper bound. The GSPO paper
averages per sequence: use --loss-agg-mode seq-mean-token-mean to reproduce it.
"""
import torch

from .config import GSPOConfig
from .interface import LossInputs, ObjectiveOutput
from .numerics import exp_clamped, masked_mean, sequence_mean


def gspo_loss(inputs: LossInputs, cfg: GSPOConfig) -> ObjectiveOutput:
    mask = inputs.mask
    seq_ratio = exp_clamped(sequence_mean(inputs.logprobs - inputs.old_logprobs, mask))
    advantages = inputs.advantages
    unclipped = -advantages * seq_ratio
    clipped = -advantages * seq_ratio.clamp(1.0 - cfg.seq_clip_ratio_low, 1.0 + cfg.seq_clip_ratio_high)
    seq_loss = torch.maximum(unclipped, clipped)

    has_tokens = mask.any(dim=-1)
    ratio_value = seq_ratio.detach()
    metrics = {
        "seq_clipfrac_low": masked_mean(((advantages < 0) & (ratio_value < 1.0 - cfg.seq_clip_ratio_low))
                                        .float(), has_tokens),
        "seq_clipfrac_high": masked_mean(((advantages > 0) & (ratio_value > 1.0 + cfg.seq_clip_ratio_high))
                                         .float(), has_tokens),
    }
    return ObjectiveOutput(torch.where(mask, seq_loss[:, None], 0.0), metrics)
