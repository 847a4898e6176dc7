"""16k-token responses, -inf / -1e30 log-probabilities and NaN padding: no NaN/inf anywhere."""
import pytest
import torch

from megatron_qarl.rl.objectives import (
    LOSSES,
    MISMATCH_CORRECTIONS,
    GSPOConfig,
    MismatchConfig,
    PolicyLossConfig,
    TBPOConfig,
    compute_policy_loss,
)

COMBINATIONS = [(loss, correction) for loss in LOSSES for correction in MISMATCH_CORRECTIONS
                if loss != "tbpo" or correction == "none"]


def _hostile_batch(width=16384):
    gen = torch.Generator().manual_seed(0)
    lengths = torch.tensor([width, width - width // 16, 37, 0])
    mask = torch.arange(width)[None, :] < lengths[:, None]
    old = -torch.rand(4, width, generator=gen) * 12
    current = old + 0.5 * torch.randn(4, width, generator=gen)
    sampler = old + 0.5 * torch.randn(4, width, generator=gen)
    # valid tokens that one side thinks (next to) impossible
    current[0, 10], old[0, 20], sampler[0, 30], sampler[1, 5] = -1e30, -1e30, -torch.inf, -1e30
    old[1, 7], sampler[1, 7] = -torch.inf, -torch.inf
    # padding as engines leave it
    current = torch.where(mask, current, torch.nan)
    old = torch.where(mask, old, -1e30)
    sampler = torch.where(mask, sampler, -torch.inf)
    return current.to(torch.bfloat16), old, sampler, torch.tensor([1.0, -1.0, -2.0, 1.0]), mask


@pytest.mark.parametrize("loss_name, correction", COMBINATIONS)
@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"])
def test_finite_loss_and_grads_on_16k_hostile_batch(loss_name, correction, mode):
    current, old, sampler, adv, mask = _hostile_batch()
    current.requires_grad_()
    # wide bands, so that the sequence objectives keep (and differentiate) these sequences
    cfg = PolicyLossConfig(loss=loss_name, mismatch_correction=correction, loss_agg_mode=mode,
                           gspo=GSPOConfig(0.9, 5.0),
                           mismatch=MismatchConfig(mis_ratio_low=1e-3, mis_ratio_high=1e3),
                           tbpo=TBPOConfig(seq_clip_ratio_high=5.0, neg_seq_clip_ratio_low=0.9,
                                           neg_seq_clip_ratio_high=5.0))
    loss, metrics = compute_policy_loss(cfg, current, old, adv, mask, sampler)
    loss.backward()
    assert torch.isfinite(loss)
    assert torch.isfinite(current.grad.float()).all()
    assert torch.count_nonzero(current.grad[~mask]) == 0
    assert torch.count_nonzero(current.grad[mask]) > 0
    assert loss.dtype == torch.float32
    for name, value in metrics.items():
        assert torch.isfinite(value), name


def test_entropy_metric_with_masked_logits_is_finite():
    current, old, sampler, adv, mask = _hostile_batch(width=64)
    logits = torch.randn(4, 64, 50)
    logits[..., :10] = -torch.inf  # vocabulary entries masked out
    _, metrics = compute_policy_loss(PolicyLossConfig(), current.float(), old, adv, mask, sampler,
                                     logits=logits)
    assert torch.isfinite(metrics["entropy"])
