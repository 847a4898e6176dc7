"""Diagnostics returned with every loss: ratios, sampler/learner mismatch, entropy.

All values are detached fp32 scalars over the batch given. The trainer passes each rank's rows
of an RL step, each row's logprobs from the optimizer step that trained it, within
numerics.reduced_over its data-parallel group, so the statistics are over every rank's tokens
(a mean of ranks' means weighs a token by the inverse of its rank's token count). Keys:
  ratio_token_{mean,min,max}     pi_theta / pi_old per response token
  ratio_seq_{mean,min,max}       geometric-mean sequence ratio (what gspo/tbpo clip)
  mismatch_abs_log_w_token       mean |log pi_old_learner - log pi_sampler| per token
  mismatch_abs_log_w_seq         mean over sequences of |mean_t log w|, TBPO's log w
  mismatch_k3_kl                 k3 estimate of KL(sampler || learner): tokens are sampler draws
  entropy                        mean policy entropy per response token (logits given)
The objective adds its own clip/mask fractions (clipfrac_*, seq_clipfrac_*, masked_seq_frac).
"""
import torch
from torch import Tensor

from .interface import LossInputs
from .numerics import LOG_RATIO_LIMIT, exp_clamped, masked_max, masked_mean, masked_min, sequence_mean


def ratio_stats(inputs: LossInputs) -> dict[str, Tensor]:
    mask = inputs.mask
    log_ratio = (inputs.logprobs - inputs.old_logprobs).detach()
    token_ratio = exp_clamped(log_ratio)
    seq_ratio = exp_clamped(sequence_mean(log_ratio, mask))
    has_tokens = mask.any(dim=-1)
    return {
        "ratio_token_mean": masked_mean(token_ratio, mask),
        "ratio_token_min": masked_min(token_ratio, mask),
        "ratio_token_max": masked_max(token_ratio, mask),
        "ratio_seq_mean": masked_mean(seq_ratio, has_tokens),
        "ratio_seq_min": masked_min(seq_ratio, has_tokens),
        "ratio_seq_max": masked_max(seq_ratio, has_tokens),
    }


def mismatch_stats(old_logprobs: Tensor, sampler_logprobs: Tensor, mask: Tensor) -> dict[str, Tensor]:
    """How far the learner (weights of the rollout version) is from the sampler. The sequence
    log w is TBPO's and MIS's (tis.sequence_log_mismatch: the mean before any clamp)."""
    diff = torch.where(mask, old_logprobs - sampler_logprobs, 0.0)
    log_w = diff.clamp(-LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
    k3 = torch.expm1(log_w) - log_w  # w - 1 - log w >= 0, unbiased for KL(sampler || learner)
    return {
        "mismatch_abs_log_w_token": masked_mean(log_w.abs(), mask),
        "mismatch_abs_log_w_seq": masked_mean(sequence_mean(diff, mask).abs(), mask.any(dim=-1)),
        "mismatch_k3_kl": masked_mean(k3, mask),
    }


@torch.no_grad()
def entropy_from_logits(logits: Tensor, chunk_size: int = 1024) -> Tensor:
    """Entropy per position [..., V] -> [...] in fp32, chunk_size positions at a time so
    that only chunk_size x vocab fp32 temporaries exist (the full fp32 copy of 16k x 150k
    logits would be ~10 GB)."""
    flat = logits.reshape(-1, logits.shape[-1])
    entropy = torch.empty(flat.shape[0], dtype=torch.float32, device=logits.device)
    for start in range(0, flat.shape[0], chunk_size):
        log_probs = torch.log_softmax(flat[start:start + chunk_size].float(), dim=-1)
        entropy[start:start + chunk_size] = entropy_of_log_probs(log_probs)
    return entropy.reshape(logits.shape[:-1])


@torch.no_grad()
def entropy_of_log_probs(log_probs: Tensor) -> Tensor:
    """-sum p log p over the last dim; nansum: 0 * -inf from a -inf logit counts as 0."""
    return -(log_probs.exp() * log_probs).nansum(dim=-1)


def entropy_stats(logits: Tensor, mask: Tensor, chunk_size: int = 1024) -> dict[str, Tensor]:
    return {"entropy": masked_mean(entropy_from_logits(logits, chunk_size), mask)}
