"""Ratio, mismatch and entropy diagnostics against hand computation / an independent formula."""
import math

import pytest
import torch
from objective_cases import logprobs_from_ratios, sampler_from_weights

from megatron_qarl.rl.objectives import (
    PolicyLossConfig,
    compute_policy_loss,
    entropy_from_logits,
    mismatch_stats,
)


def test_mismatch_stats_by_hand():
    # log w per token: seq0 [0.1, -0.3], seq1 [0.2]
    old = torch.tensor([[-1.0, -2.0], [-0.5, 0.0]])
    sampler = torch.tensor([[-1.1, -1.7], [-0.7, -torch.inf]])
    mask = torch.tensor([[True, True], [True, False]])
    stats = mismatch_stats(old, sampler, mask)
    log_w = [0.1, -0.3, 0.2]
    assert stats["mismatch_abs_log_w_token"].item() == pytest.approx(0.6 / 3, abs=1e-6)
    assert stats["mismatch_abs_log_w_seq"].item() == pytest.approx((0.1 + 0.2) / 2, abs=1e-6)
    k3 = sum(math.exp(x) - 1 - x for x in log_w) / 3
    assert stats["mismatch_k3_kl"].item() == pytest.approx(k3, rel=1e-4)


def test_the_sequence_mismatch_is_tbpos_log_w_past_the_token_clamp():
    """Each token's log w was clamped to +-20 before the sequence mean: 10 where TBPO's log w
    (tis.sequence_log_mismatch) is 14."""
    from megatron_qarl.rl.objectives.tis import sequence_log_mismatch

    old, sampler = torch.tensor([[-30.0, -1.0]]), torch.tensor([[-2.0, -1.0]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    stats = mismatch_stats(old, sampler, mask)
    assert stats["mismatch_abs_log_w_seq"].item() == pytest.approx(14.0)
    assert sequence_log_mismatch(old, sampler, mask).abs().item() == pytest.approx(14.0)
    assert stats["mismatch_abs_log_w_token"].item() == pytest.approx(10.0)  # clamped: 20, 0


def test_ratio_stats_by_hand():
    e = math.exp
    lp, old, mask = logprobs_from_ratios([[e(0.2), e(-0.4)], [e(0.1), None]])
    sampler = sampler_from_weights(old, mask, [[1.0, 1.0], [1.0, None]])
    _, metrics = compute_policy_loss(PolicyLossConfig(), lp, old, torch.tensor([1.0, -1.0]), mask, sampler)
    assert metrics["ratio_token_max"].item() == pytest.approx(e(0.2), rel=1e-5)
    assert metrics["ratio_token_min"].item() == pytest.approx(e(-0.4), rel=1e-5)
    assert metrics["ratio_token_mean"].item() == pytest.approx((e(0.2) + e(-0.4) + e(0.1)) / 3, rel=1e-5)
    assert metrics["ratio_seq_min"].item() == pytest.approx(e(-0.1), rel=1e-5)
    assert metrics["ratio_seq_max"].item() == pytest.approx(e(0.1), rel=1e-5)
    assert metrics["mismatch_abs_log_w_token"].item() == pytest.approx(0.0, abs=1e-6)


def test_the_sequence_ratio_mean_is_over_real_sequences():
    # sequence ratios exp(-0.1) and exp(0.1), and an empty row that is no sequence
    e = math.exp
    lp, old, mask = logprobs_from_ratios([[e(0.2), e(-0.4)], [e(0.1), None], [None, None]])
    sampler = sampler_from_weights(old, mask, [[1.0, 1.0], [1.0, None], [None, None]])
    metrics = compute_policy_loss(PolicyLossConfig(), lp, old, torch.tensor([1.0, -1.0, 1.0]),
                                  mask, sampler)[1]
    assert metrics["ratio_seq_mean"].item() == pytest.approx((e(-0.1) + e(0.1)) / 2, rel=1e-5)


def test_metrics_hold_no_graph():
    lp, old, mask = logprobs_from_ratios([[1.1, 0.9]])
    sampler = sampler_from_weights(old, mask, [[1.0, 1.0]])
    metrics = compute_policy_loss(PolicyLossConfig(), lp, old, torch.tensor([1.0]), mask,
                                  sampler)[1]
    assert [k for k, v in metrics.items() if v.requires_grad] == []


def test_chunked_entropy_matches_categorical():
    logits = torch.randn(3, 7, 11, dtype=torch.bfloat16)
    reference = torch.distributions.Categorical(logits=logits.float()).entropy()
    torch.testing.assert_close(entropy_from_logits(logits, chunk_size=4), reference, rtol=1e-5, atol=1e-5)


def test_entropy_by_hand():
    # uniform over 4 -> log 4; one-hot (others -inf) -> 0
    logits = torch.tensor([[[0.0, 0.0, 0.0, 0.0], [5.0, -torch.inf, -torch.inf, -torch.inf]]])
    torch.testing.assert_close(entropy_from_logits(logits, chunk_size=1), torch.tensor([[math.log(4), 0.0]]))
