"""TBPO: trust band, sequence mismatch weight, masking; by hand, and the paper's Fig. 6."""
import math

import pytest
import torch
from objective_cases import logprobs_from_ratios, sampler_from_weights

from megatron_qarl.rl.objectives import PolicyLossConfig, TBPOConfig, TokenClipConfig, compute_policy_loss


def _uniform_ratio_row(seq_ratio, length, spread=0.05):
    """Token ratios whose geometric mean is seq_ratio but which differ token to token."""
    logs = [math.log(seq_ratio) + (spread if t % 2 == 0 else -spread) for t in range(length - length % 2)]
    logs += [math.log(seq_ratio)] * (length % 2)
    return [math.exp(x) for x in logs]


def test_tbpo_by_hand():
    cfg = PolicyLossConfig(loss="tbpo", loss_agg_mode="token-mean",
                           tbpo=TBPOConfig(seq_clip_ratio_high=0.1, neg_seq_clip_ratio_low=0.1,
                                           neg_seq_clip_ratio_high=0.2, seq_tis_imp_ratio_cap=2.0))
    # (A, sequence ratio r, length, sequence weight before clipping)
    cases = [
        (+1.0, 1.05, 4, math.exp(0.2)),  # kept: r <= 1.1
        (+1.0, 1.20, 3, 1.0),            # masked: A > 0 and r > 1 + eps_h
        (-1.0, 0.85, 2, 1.0),            # masked: A < 0 and r < 1 - delta_l
        (-1.0, 1.25, 3, 1.0),            # masked: A < 0 and r > 1 + delta_h (dual side)
        (-0.5, 1.15, 2, 3.0),            # kept, weight 3 clipped to c = 2
        (+1.0, 0.50, 2, 1.0),            # kept: A > 0 has no lower bound
    ]
    width = max(length for *_, length, _ in cases)
    ratios = [_uniform_ratio_row(r, n) + [None] * (width - n) for _, r, n, _ in cases]
    lp, old, mask = logprobs_from_ratios(ratios)
    weights = [[w] * n + [None] * (width - n) for *_, n, w in cases]
    sampler = sampler_from_weights(old, mask, weights)
    adv = torch.tensor([a for a, *_ in cases])
    loss, metrics = compute_policy_loss(cfg, lp, old, adv, mask, sampler)

    total_tokens = 4 + 3 + 2 + 3 + 2 + 2
    kept = {0: (math.exp(0.2), 1.05, 1.0, 4), 4: (2.0, 1.15, -0.5, 2), 5: (1.0, 0.5, 1.0, 2)}
    # every token of a kept sequence carries -w r A; token-mean divides by all 16 tokens
    expected = sum(-w * r * a * n for w, r, a, n in kept.values()) / total_tokens
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    loss.backward()
    # d/d logprob_{i,t} of n * (-w r A) / N with r = exp(mean_t log ratio) is -w r A / N
    expected_grad = torch.zeros(len(cases), width)
    for i, (w, r, a, n) in kept.items():
        expected_grad[i, :n] = -w * r * a / total_tokens
    torch.testing.assert_close(lp.grad, expected_grad, atol=1e-6, rtol=1e-5)
    assert metrics["masked_seq_frac"].item() == pytest.approx(3 / 6)
    assert metrics["seq_masked_frac_pos_high"].item() == pytest.approx(1 / 6)
    assert metrics["seq_masked_frac_neg_low"].item() == pytest.approx(1 / 6)
    assert metrics["seq_masked_frac_neg_high"].item() == pytest.approx(1 / 6)
    assert metrics["seq_mismatch_weight_clipfrac"].item() == pytest.approx(1 / 6)


def test_tbpo_weight_band_and_metrics_by_hand():
    """Per-token weights that differ within a sequence (its weight is their geometric mean,
    clipped to [1/c, c] on both sides), a lower band of its own, an A = 0 sequence (kept,
    contributes nothing) and a row without tokens (in no metric's denominator)."""
    cfg = PolicyLossConfig(loss="tbpo", loss_agg_mode="token-mean",
                           tbpo=TBPOConfig(seq_clip_ratio_high=0.1, neg_seq_clip_ratio_low=0.05,
                                           neg_seq_clip_ratio_high=0.2, seq_tis_imp_ratio_cap=2.0))
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0], [1.0, 1.0], [0.93, 0.93], [1.5, 1.5],
                                          [None, None]])
    sampler = sampler_from_weights(old, mask, [
        [4.0, 0.25],   # geometric mean 1 (arithmetic 2.125, max 4)
        [0.1, 0.1],    # 0.1, clipped up to 1/c = 0.5
        [1.0, 1.0],    # A < 0 at r = 0.93: below 1 - delta_l (inside 1 - eps_h): masked
        [1.0, 1.0],    # A = 0 at r = 1.5: kept (a positive one would be masked)
        [None, None]])
    loss, metrics = compute_policy_loss(cfg, lp, old, torch.tensor([1.0, 1.0, -1.0, 0.0, 1.0]),
                                        mask, sampler)
    assert loss.item() == pytest.approx((-1.0 * 2 - 0.5 * 2) / 8, rel=1e-5)
    assert metrics["masked_seq_frac"].item() == pytest.approx(1 / 4)
    assert metrics["seq_masked_frac_neg_low"].item() == pytest.approx(1 / 4)
    assert metrics["seq_masked_frac_pos_high"].item() == 0.0
    assert metrics["seq_mismatch_weight_clipfrac"].item() == pytest.approx(1 / 4)


def test_tbpo_weight_mean_is_of_the_capped_weights():
    # sequence weights (geometric means of the token ones) 1 and 0.1, clipped to [0.5, 2]:
    # mean 0.75 (0.55 unclipped)
    cfg = PolicyLossConfig(loss="tbpo", tbpo=TBPOConfig(seq_tis_imp_ratio_cap=2.0))
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0], [1.0, 1.0]])
    sampler = sampler_from_weights(old, mask, [[4.0, 0.25], [0.1, 0.1]])
    metrics = compute_policy_loss(cfg, lp, old, torch.tensor([1.0, 1.0]), mask, sampler)[1]
    assert metrics["seq_mismatch_weight_mean"].item() == pytest.approx(0.75, rel=1e-5)


def test_a_band_of_zero_width_keeps_the_on_policy_sequences():
    """The band [1 - delta_l, 1 + delta_h] includes its edges: with every width 0, the first
    mini-batch (r = 1 exactly) is kept, both signs of A, and gets the plain gradient."""
    cfg = PolicyLossConfig(loss="tbpo", tbpo=TBPOConfig(
        seq_clip_ratio_high=0.0, neg_seq_clip_ratio_low=0.0, neg_seq_clip_ratio_high=0.0))
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0], [1.0, 1.0]])
    sampler = sampler_from_weights(old, mask, [[1.0, 1.0], [1.0, 1.0]])
    loss, metrics = compute_policy_loss(cfg, lp, old, torch.tensor([1.0, -1.0]), mask, sampler)
    assert metrics["masked_seq_frac"].item() == 0.0
    loss.backward()
    torch.testing.assert_close(lp.grad, torch.tensor([[-0.25, -0.25], [0.25, 0.25]]))


def test_tbpo_seq_mean_token_mean_by_hand():
    cfg = PolicyLossConfig(loss="tbpo", loss_agg_mode="seq-mean-token-mean")
    # on-policy first mini-batch: r = 1 exactly, inside every band; w = 1.5 (cap 2)
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0, 1.0], [1.0, None, None]])
    sampler = sampler_from_weights(old, mask, [[1.5] * 3, [1.5, None, None]])
    loss, metrics = compute_policy_loss(cfg, lp, old, torch.tensor([2.0, -1.0]), mask, sampler)
    assert loss.item() == pytest.approx((-1.5 * 2.0 + 1.5 * 1.0) / 2, rel=1e-6)
    loss.backward()
    # per sequence mean of L equal token losses -w r A, / 2 sequences; d r / d lp_t = r / L
    expected_grad = torch.tensor([[-1.5 * 2.0 / 3 / 2] * 3, [1.5 * 1.0 / 1 / 2, 0.0, 0.0]])
    torch.testing.assert_close(lp.grad, expected_grad, atol=1e-6, rtol=1e-5)
    assert metrics["masked_seq_frac"].item() == 0.0


def test_table2_defaults():
    tbpo = PolicyLossConfig().tbpo
    assert (tbpo.seq_clip_ratio_high, tbpo.neg_seq_clip_ratio_low, tbpo.neg_seq_clip_ratio_high,
            tbpo.seq_tis_imp_ratio_cap) == (0.0004, 0.0003, 0.0007, 2.0)
    assert PolicyLossConfig().gspo.seq_clip_ratio_low == 0.0003
    assert PolicyLossConfig().loss == "tbpo"


def test_fig6_error_burst_masked_by_tbpo_but_not_by_token_clipping():
    """Negative-advantage response: clean prefix, a burst of garbled tokens the old policy gave
    probability 0.02 and the current one 0.08 (ratio 4), then repetitive tokens generated in
    the corrupted prefix whose ratio drifts to 1.15. A clean positive response rides along."""
    prefix, burst, tail = [1.0] * 4, [4.0] * 3, [1.15] * 5
    bad = prefix + burst + tail
    old_probs = [[0.8] * 4 + [0.02] * 3 + [0.3] * 5, [0.8] * len(bad)]
    lp, old, mask = logprobs_from_ratios([bad, [1.0] * len(bad)], old_probs=old_probs)
    sampler = sampler_from_weights(old, mask, [[1.0] * len(bad)] * 2)
    adv = torch.tensor([-1.0, 1.0])
    after_burst = slice(len(prefix) + len(burst), len(bad))

    loss, metrics = compute_policy_loss(PolicyLossConfig(loss="tbpo"), lp, old, adv, mask, sampler)
    loss.backward()
    assert metrics["masked_seq_frac"].item() == pytest.approx(0.5)
    assert metrics["seq_masked_frac_neg_high"].item() == pytest.approx(0.5)
    assert torch.count_nonzero(lp.grad[0]) == 0  # whole bad response out of the update
    assert torch.all(lp.grad[1] != 0)            # the clean one still learns

    for loss_name in ("grpo", "dual_clip"):
        lp.grad = None
        cfg = PolicyLossConfig(loss=loss_name, token_clip=TokenClipConfig(dual_clip_ratio_c=3.0))
        compute_policy_loss(cfg, lp, old, adv, mask, sampler)[0].backward()
        # tokens after the burst keep pushing: -A r / N != 0 (ratio 1.15 is inside [0.8, inf))
        torch.testing.assert_close(lp.grad[0, after_burst], torch.full((len(tail),), 1.15 / (2 * len(bad))),
                                   rtol=1e-5, atol=1e-7)
        burst_grad = lp.grad[0, len(prefix):len(prefix) + len(burst)]
        # grpo lets the burst itself dominate (ratio 4), dual_clip silences only the burst
        if loss_name == "dual_clip":
            assert torch.all(burst_grad == 0)
        else:
            assert torch.all(burst_grad > 3 * lp.grad[0, -1])
