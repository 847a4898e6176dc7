"""GSPO: geometric-mean sequence ratio, sequence clip; loss and gradient by hand."""
import math

import pytest
import torch
from objective_cases import logprobs_from_ratios, sampler_from_weights

from megatron_qarl.rl.objectives import GSPOConfig, PolicyLossConfig, compute_policy_loss


def _config(**kwargs):
    return PolicyLossConfig(loss="gspo", loss_agg_mode="seq-mean-token-mean",
                            gspo=GSPOConfig(seq_clip_ratio_low=0.2, seq_clip_ratio_high=0.05), **kwargs)


def test_gspo_by_hand():
    # seq0 A=+1: log ratios 0.3, -0.1, 0.1 -> s = e^0.1 = 1.1052 > 1.05 -> clipped to -1.05
    # seq1 A=-1: log ratios -0.2, 0.0       -> s = e^-0.1 = 0.9048 inside -> loss +0.9048
    e = math.exp
    lp, old, mask = logprobs_from_ratios([[e(0.3), e(-0.1), e(0.1)], [e(-0.2), e(0.0), None]])
    adv = torch.tensor([1.0, -1.0])
    loss, metrics = compute_policy_loss(_config(), lp, old, adv, mask)
    s1 = e(-0.1)
    assert loss.item() == pytest.approx((-1.05 + s1) / 2, abs=1e-6)
    loss.backward()
    # d s / d logprob_t = s / L; seq-mean-token-mean averages over 2 sequences
    expected_grad = torch.tensor([[0.0, 0.0, 0.0], [s1 / 2 / 2, s1 / 2 / 2, 0.0]])
    torch.testing.assert_close(lp.grad, expected_grad, atol=1e-6, rtol=1e-5)
    assert metrics["seq_clipfrac_high"].item() == pytest.approx(0.5)
    assert metrics["seq_clipfrac_low"].item() == 0.0


def test_gspo_low_clip_fraction_counts_negative_advantages_over_real_sequences():
    # s = exp(-0.3) = 0.74, under 1 - 0.2: clipped only where A < 0, and an empty row is no
    # sequence
    e = math.exp
    lp, old, mask = logprobs_from_ratios([[e(-0.3), e(-0.3)]])
    metrics = compute_policy_loss(_config(), lp, old, torch.tensor([1.0]), mask)[1]
    assert metrics["seq_clipfrac_low"].item() == 0.0
    lp, old, mask = logprobs_from_ratios([[e(-0.3), e(-0.3)], [None, None]])
    metrics = compute_policy_loss(_config(), lp, old, torch.tensor([-1.0, -1.0]), mask)[1]
    assert metrics["seq_clipfrac_low"].item() == pytest.approx(1.0)


def test_gspo_sequence_tis_by_hand():
    # sequence weight = geometric mean of 4 and 4 = 4, capped at 2 by tis
    e = math.exp
    lp, old, mask = logprobs_from_ratios([[e(0.02), e(0.0)]])
    sampler = sampler_from_weights(old, mask, [[4.0, 4.0]])
    cfg = _config(mismatch_correction="tis")
    loss, _ = compute_policy_loss(cfg, lp, old, torch.tensor([1.0]), mask, sampler)
    s = e(0.01)
    assert loss.item() == pytest.approx(-2 * s, abs=1e-6)
    loss.backward()
    torch.testing.assert_close(lp.grad, torch.tensor([[-2 * s / 2, -2 * s / 2]]), atol=1e-6, rtol=1e-5)


def test_gspo_tis_weight_is_the_sequences():
    """Token weights 4 and 0.25: the sequence's weight is their geometric mean, 1 (per token,
    capped at 2: 2 and 0.25, a mean of 1.125)."""
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0]])
    sampler = sampler_from_weights(old, mask, [[4.0, 0.25]])
    loss, _ = compute_policy_loss(_config(mismatch_correction="tis"), lp, old,
                                  torch.tensor([1.0]), mask, sampler)
    assert loss.item() == pytest.approx(-1.0, rel=1e-6)


def test_gspo_tis_weight_mean_counts_each_sequence_once():
    """Sequences of 1 and 3 tokens with weights 1 and 1.5: the mean over sequences is 1.25,
    as mis_weight_mean's; expanded to the tokens first it read 1.375."""
    lp, old, mask = logprobs_from_ratios([[1.0, None, None], [1.0, 1.0, 1.0]])
    sampler = sampler_from_weights(old, mask, [[1.0, None, None], [1.5, 1.5, 1.5]])
    metrics = compute_policy_loss(_config(mismatch_correction="tis"), lp, old,
                                  torch.tensor([1.0, 1.0]), mask, sampler)[1]
    assert metrics["tis_weight_mean"].item() == pytest.approx(1.25, rel=1e-5)
