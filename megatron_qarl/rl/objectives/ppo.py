"""Token-level PPO clip: --loss grpo, dapo and dual_clip.

Per response token t of a sequence with advantage A and ratio r_t = pi_theta / pi_old:
    loss_t = max(-A r_t, -A clip(r_t, 1 - eps_low, 1 + eps_high))
grpo and dapo are this same loss; dapo only defaults eps_high to 0.28 (DAPO clip-higher:
more room for low-probability exploration tokens to grow when A > 0). dual_clip adds the
bound of Ye et al. 2020 for A < 0, loss_t = min(loss_t, -A c), so a token whose ratio
exploded (the low-probability error tokens of paper Section 3.2) contributes a constant,
not a gradient proportional to its ratio.
"""
import torch

from .config import TokenClipConfig
from .interface import LossInputs, ObjectiveOutput
from .numerics import exp_clamped, masked_mean


def token_clip_loss(inputs: LossInputs, cfg: TokenClipConfig, dual_clip: bool) -> ObjectiveOutput:
    mask = inputs.mask
    ratio = exp_clamped(inputs.logprobs - inputs.old_logprobs)
    advantages = inputs.advantages[:, None]
    unclipped = -advantages * ratio
    clipped = -advantages * ratio.clamp(1.0 - cfg.clip_ratio_low, 1.0 + cfg.clip_ratio_high)
    token_loss = torch.maximum(unclipped, clipped)

    ratio_value = ratio.detach()
    negative = advantages < 0
    metrics = {
        "clipfrac_low": masked_mean((negative & (ratio_value < 1.0 - cfg.clip_ratio_low)).float(), mask),
        "clipfrac_high": masked_mean(((advantages > 0) & (ratio_value > 1.0 + cfg.clip_ratio_high)).float(),
                                     mask),
    }
    if dual_clip:
        dual_bound = -advantages * cfg.dual_clip_ratio_c
        token_loss = torch.where(negative, torch.minimum(token_loss, dual_bound), token_loss)
        metrics["clipfrac_dual"] = masked_mean((negative & (ratio_value > cfg.dual_clip_ratio_c)).float(),
                                               mask)
    return ObjectiveOutput(torch.where(mask, token_loss, 0.0), metrics)
