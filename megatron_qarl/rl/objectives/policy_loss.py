"""The single entry point the trainer calls: compute_policy_loss.

--loss picks the objective from OBJECTIVES; --mismatch-correction is then applied at the
objective's granularity:
                 none   tis / tis2                        mis
  grpo, dapo,    -      token weight min(w_t, C) or       sequences with geometric-mean
  dual_clip             clip(w_t, 1/C, C) x token loss    w outside the band masked, the
                                                          others' loss x w
  gspo           -      sequence weight (geometric mean)  same
                        x sequence loss
  tbpo           its own clipped sequence weight; other corrections are rejected by the config
"""
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .aggregation import aggregate_loss
from .config import PolicyLossConfig
from .diagnostics import entropy_stats, mismatch_stats, ratio_stats
from .gspo import gspo_loss
from .interface import LossInputs, ObjectiveOutput
from .mis import mis_weight
from .numerics import masked_mean
from .ppo import token_clip_loss
from .tbpo import tbpo_loss
from .tis import sequence_log_mismatch, token_log_mismatch, truncated_weight


@dataclass(frozen=True)
class Objective:
    """An objective and the granularity ("token" or "sequence") its TIS weight takes."""

    compute: Callable[[LossInputs, PolicyLossConfig], ObjectiveOutput]
    weight_level: str


def _token_clip(inputs: LossInputs, cfg: PolicyLossConfig) -> ObjectiveOutput:
    return token_clip_loss(inputs, cfg.token_clip, dual_clip=False)


def _dual_clip(inputs: LossInputs, cfg: PolicyLossConfig) -> ObjectiveOutput:
    return token_clip_loss(inputs, cfg.token_clip, dual_clip=True)


def _gspo(inputs: LossInputs, cfg: PolicyLossConfig) -> ObjectiveOutput:
    return gspo_loss(inputs, cfg.gspo)


def _tbpo(inputs: LossInputs, cfg: PolicyLossConfig) -> ObjectiveOutput:
    return tbpo_loss(inputs, cfg.tbpo)


# grpo and dapo share one loss: they differ only in the default of --clip-ratio-high.
OBJECTIVES: dict[str, Objective] = {
    "grpo": Objective(_token_clip, "token"),
    "dapo": Objective(_token_clip, "token"),
    "dual_clip": Objective(_dual_clip, "token"),
    "gspo": Objective(_gspo, "sequence"),
    "tbpo": Objective(_tbpo, "sequence"),
}


def _apply_mismatch_correction(output: ObjectiveOutput, inputs: LossInputs, cfg: PolicyLossConfig,
                               weight_level: str) -> ObjectiveOutput:
    mode = cfg.mismatch_correction
    if mode == "none":
        return output
    mask, old, sampler = inputs.mask, inputs.old_logprobs, inputs.sampler_logprobs
    has_tokens = mask.any(dim=-1)
    if mode == "mis":
        weight, keep = mis_weight(sequence_log_mismatch(old, sampler, mask),
                                  cfg.mismatch.mis_ratio_low, cfg.mismatch.mis_ratio_high)
        output.metrics["masked_seq_frac"] = masked_mean((~keep).float(), has_tokens)
        output.metrics["mis_weight_mean"] = masked_mean(weight, keep & has_tokens)
        weight = weight[:, None].expand_as(mask)
    else:
        two_sided = mode == "tis2"
        if weight_level == "token":
            weight, truncated = truncated_weight(token_log_mismatch(old, sampler, mask),
                                                 cfg.mismatch.tis_imp_ratio_cap, two_sided)
            output.metrics["tis_clipfrac"] = masked_mean(truncated.float(), mask)
            output.metrics["tis_weight_mean"] = masked_mean(weight, mask)
        else:  # a sequence counts once, as in mis_weight_mean (not once a token)
            weight, truncated = truncated_weight(sequence_log_mismatch(old, sampler, mask),
                                                 cfg.mismatch.tis_imp_ratio_cap, two_sided)
            output.metrics["tis_clipfrac"] = masked_mean(truncated.float(), has_tokens)
            output.metrics["tis_weight_mean"] = masked_mean(weight, has_tokens)
            weight = weight[:, None].expand_as(mask)
    return ObjectiveOutput(torch.where(mask, output.token_loss * weight, 0.0), output.metrics)


def compute_policy_loss(
    cfg: PolicyLossConfig,
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    response_mask: Tensor,
    sampler_logprobs: Tensor | None = None,
    *,
    normalizer: float | Tensor | None = None,
    logits: Tensor | None = None,
    entropy_chunk_size: int = 1024,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Policy loss (fp32 scalar, differentiable w.r.t. logprobs) and its diagnostics.

    logprobs [B, S]: current policy; old_logprobs [B, S]: learner with the rollout's weights;
    sampler_logprobs [B, S]: rollout engine (needed by tbpo and by any mismatch correction,
    also feeds the mismatch metrics); advantages [B]: one per sequence; response_mask [B, S]:
    bool or 0/1. Padding may hold anything, -inf and NaN included. normalizer: see
    aggregation (pass the global count for data-parallel training). logits [B, S, V] only
    feed the entropy metric.
    """
    if cfg.needs_sampler_logprobs and sampler_logprobs is None:
        raise ValueError(f"--loss {cfg.loss} with --mismatch-correction {cfg.mismatch_correction} "
                         "needs sampler_logprobs (the rollout engine's logprobs of the sampled tokens)")
    inputs = LossInputs.prepare(logprobs, old_logprobs, advantages, response_mask, sampler_logprobs)
    objective = OBJECTIVES[cfg.loss]
    output = objective.compute(inputs, cfg)
    output = _apply_mismatch_correction(output, inputs, cfg, objective.weight_level)
    loss = aggregate_loss(output.token_loss, inputs.mask, cfg.loss_agg_mode, normalizer)

    metrics = {"pg_loss": loss.detach(), **output.metrics, **ratio_stats(inputs)}
    if inputs.sampler_logprobs is not None:
        metrics.update(mismatch_stats(inputs.old_logprobs, inputs.sampler_logprobs, inputs.mask))
    if logits is not None:
        metrics.update(entropy_stats(logits, inputs.mask, entropy_chunk_size))
    return loss, metrics
