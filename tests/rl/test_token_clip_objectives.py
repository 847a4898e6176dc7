"""grpo / dapo / dual_clip: loss and d loss / d logprobs computed by hand."""
import math

import pytest
import torch
from objective_cases import logprobs_from_ratios, sampler_from_weights

from megatron_qarl.rl.objectives import PolicyLossConfig, TokenClipConfig, compute_policy_loss


def _config(loss, **clip):
    return PolicyLossConfig(loss=loss, loss_agg_mode="token-mean", token_clip=TokenClipConfig(**clip))


def test_dapo_clip_higher_by_hand():
    # seq0 A=+1 ratios 1.1, 1.5, 0.5; seq1 A=-2 ratios 0.7, 1.3 (+ padding); eps 0.2 / 0.28
    lp, old, mask = logprobs_from_ratios([[1.1, 1.5, 0.5], [0.7, 1.3, None]])
    adv = torch.tensor([1.0, -2.0])
    loss, metrics = compute_policy_loss(_config("dapo", clip_ratio_low=0.2, clip_ratio_high=0.28),
                                        lp, old, adv, mask)
    # token losses max(-A r, -A clip(r, 0.8, 1.28)):
    #   seq0: -1.1 (inside), -1.28 (clipped high: 1.5 -> 1.28), -0.5 (r < 0.8 but A > 0: unclipped)
    #   seq1: max(1.4, 1.6) = 1.6 (clipped low), max(2.6, 2.56) = 2.6 (A < 0: no upper clip)
    expected = (-1.1 - 1.28 - 0.5 + 1.6 + 2.6) / 5
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    loss.backward()
    # d(-A r)/d logprob = -A r where unclipped, 0 where clipped; token-mean divides by 5
    expected_grad = torch.tensor([[-1.1, 0.0, -0.5], [0.0, 2.0 * 1.3, 0.0]]) / 5
    torch.testing.assert_close(lp.grad, expected_grad, atol=1e-6, rtol=1e-5)
    assert metrics["clipfrac_high"].item() == pytest.approx(1 / 5)
    assert metrics["clipfrac_low"].item() == pytest.approx(1 / 5)


def test_grpo_symmetric_clip_by_hand():
    lp, old, mask = logprobs_from_ratios([[1.5, 0.9], [0.7, 1.3]])
    adv = torch.tensor([0.5, -1.0])
    cfg = _config("grpo", clip_ratio_low=0.2, clip_ratio_high=0.2)
    loss, _ = compute_policy_loss(cfg, lp, old, adv, mask)
    # seq0: max(-0.75, -0.6) = -0.6 (clipped), max(-0.45, -0.45) = -0.45
    # seq1: max(0.7, 0.8) = 0.8 (clipped), max(1.3, 1.2) = 1.3
    assert loss.item() == pytest.approx((-0.6 - 0.45 + 0.8 + 1.3) / 4, abs=1e-6)
    loss.backward()
    expected_grad = torch.tensor([[0.0, -0.5 * 0.9], [0.0, 1.3]]) / 4
    torch.testing.assert_close(lp.grad, expected_grad, atol=1e-6, rtol=1e-5)


def test_dual_clip_bounds_exploding_negative_ratio_by_hand():
    # A = -1: ratio 4 is above c = 3 -> constant loss -A c = 3, no gradient; ratio 2 stays.
    # A = +1 with ratio 4: dual clip does not apply, the ordinary upper clip does.
    lp, old, mask = logprobs_from_ratios([[4.0, 2.0], [4.0, 1.0]])
    adv = torch.tensor([-1.0, 1.0])
    cfg = _config("dual_clip", clip_ratio_low=0.2, clip_ratio_high=0.2, dual_clip_ratio_c=3.0)
    loss, metrics = compute_policy_loss(cfg, lp, old, adv, mask)
    # seq0: min(max(4, 1.2), 3) = 3; min(max(2, 1.2), 3) = 2.  seq1: max(-4, -1.2) = -1.2; -1
    assert loss.item() == pytest.approx((3 + 2 - 1.2 - 1) / 4, abs=1e-6)
    loss.backward()
    torch.testing.assert_close(lp.grad, torch.tensor([[0.0, 2.0], [0.0, -1.0]]) / 4, atol=1e-6, rtol=1e-5)
    assert metrics["clipfrac_dual"].item() == pytest.approx(1 / 4)
    # plain grpo keeps the exploding ratio's gradient
    lp.grad = None
    compute_policy_loss(_config("grpo"), lp, old, adv, mask)[0].backward()
    assert lp.grad[0, 0].item() == pytest.approx(4.0 / 4, rel=1e-5)


def test_dual_clip_counts_only_negative_advantages_past_c():
    # A = +1 with ratio 4 > c: the ordinary clip applies, not the dual one
    lp, old, mask = logprobs_from_ratios([[4.0, 1.0]])
    cfg = _config("dual_clip", dual_clip_ratio_c=3.0)
    metrics = compute_policy_loss(cfg, lp, old, torch.tensor([1.0]), mask)[1]
    assert metrics["clipfrac_dual"].item() == 0.0


@pytest.mark.parametrize("mode", ["tis", "tis2"])
def test_token_tis_by_hand(mode):
    # per-token pi_old/pi_sampler = 0.25, 3.0, 1.0 with cap C = 2:
    #   tis  -> min(w, 2)          = 0.25, 2, 1
    #   tis2 -> clip(w, 1/2, 2)    = 0.5,  2, 1
    lp, old, mask = logprobs_from_ratios([[1.1, 0.9, 1.0]])
    sampler = sampler_from_weights(old, mask, [[0.25, 3.0, 1.0]])
    adv = torch.tensor([2.0])
    cfg = PolicyLossConfig(loss="grpo", mismatch_correction=mode)
    loss, metrics = compute_policy_loss(cfg, lp, old, adv, mask, sampler)
    w = [0.25 if mode == "tis" else 0.5, 2.0, 1.0]
    token_loss = [-2 * 1.1, -2 * 0.9, -2 * 1.0]  # all inside [0.8, 1.2]
    expected = (w[0] * token_loss[0] + w[1] * token_loss[1] + w[2] * token_loss[2]) / 3
    assert loss.item() == pytest.approx(expected, abs=1e-6)
    loss.backward()
    expected_grad = torch.tensor([[w[0] * -2 * 1.1, w[1] * -2 * 0.9, w[2] * -2 * 1.0]]) / 3
    torch.testing.assert_close(lp.grad, expected_grad, atol=1e-6, rtol=1e-5)
    assert metrics["tis_clipfrac"].item() == pytest.approx((1 if mode == "tis" else 2) / 3)


def test_one_sided_tis_counts_only_weights_over_the_cap():
    """A weight far below 1 (the learner finds the sampled token nearly impossible) is not
    truncated by min(w, C); its floor, which keeps exp finite, was counted as truncation."""
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0]])
    sampler = sampler_from_weights(old, mask, [[math.exp(-29.0), 1.0]])
    cfg = PolicyLossConfig(loss="grpo", mismatch_correction="tis")
    metrics = compute_policy_loss(cfg, lp, old, torch.tensor([1.0]), mask, sampler)[1]
    assert metrics["tis_clipfrac"].item() == 0.0


def test_token_tis_clipfrac_counts_real_tokens_only():
    # 3 real tokens, one weight over the cap of 2: 1/3 (padding counted would give 1/4)
    lp, old, mask = logprobs_from_ratios([[1.0, 1.0], [1.0, None]])
    sampler = sampler_from_weights(old, mask, [[3.0, 1.0], [1.0, None]])
    cfg = PolicyLossConfig(loss="grpo", mismatch_correction="tis")
    metrics = compute_policy_loss(cfg, lp, old, torch.tensor([1.0, 1.0]), mask, sampler)[1]
    assert metrics["tis_clipfrac"].item() == pytest.approx(1 / 3)


def test_mis_masks_sequences_outside_band_and_weights_the_rest_by_hand():
    # sequence weights (geometric means): seq0 sqrt(3 * 1) ~ 1.73 inside [0.5, 2], kept and
    # weighted by it; seq1 sqrt(3 * 3) = 3 outside -> masked out of the update
    lp, old, mask = logprobs_from_ratios([[1.1, 0.9], [1.1, 0.9]])
    sampler = sampler_from_weights(old, mask, [[3.0, 1.0], [3.0, 3.0]])
    adv = torch.tensor([1.0, 1.0])
    cfg = PolicyLossConfig(loss="dual_clip", mismatch_correction="mis")
    loss, metrics = compute_policy_loss(cfg, lp, old, adv, mask, sampler)
    w = math.sqrt(3.0)  # the normaliser still counts all 4 tokens
    assert loss.item() == pytest.approx(w * (-1.1 - 0.9) / 4, abs=1e-6)
    loss.backward()
    torch.testing.assert_close(lp.grad, w * torch.tensor([[-1.1, -0.9], [0.0, 0.0]]) / 4,
                               atol=1e-6, rtol=1e-5)
    assert metrics["masked_seq_frac"].item() == pytest.approx(0.5)
    assert metrics["mis_weight_mean"].item() == pytest.approx(w, rel=1e-5)


def test_mis_band_includes_its_bounds():
    from megatron_qarl.rl.objectives.mis import mis_weight

    weight, keep = mis_weight(torch.tensor([0.0, 0.0, math.log(4.0)]), 1.0, 1.0)
    assert keep.tolist() == [True, True, False] and weight.tolist() == [1.0, 1.0, 0.0]


def test_dapo_flag_default_is_clip_higher():
    for cfg in (PolicyLossConfig(loss="dapo"), PolicyLossConfig.from_flags({"loss": "dapo"})):
        assert cfg.token_clip.clip_ratio_high == 0.28 and cfg.token_clip.clip_ratio_low == 0.2
    assert PolicyLossConfig(loss="grpo").token_clip.clip_ratio_high == 0.2
    cfg = PolicyLossConfig.from_flags({"loss": "grpo", "clip_ratio_low": 0.1})
    assert cfg.token_clip.clip_ratio_high == 0.1
    assert math.isclose(PolicyLossConfig.from_flags({"loss": "dapo", "clip_ratio_high": 0.3})
                        .token_clip.clip_ratio_high, 0.3)
