"""Aggregation modes by hand, and the data-parallel global normaliser."""
import pytest
import torch

from megatron_qarl.rl.objectives import (
    AGG_MODES,
    LOSSES,
    GSPOConfig,
    PolicyLossConfig,
    TBPOConfig,
    aggregate_loss,
    compute_policy_loss,
    local_normalizer,
)


def test_modes_by_hand():
    token_loss = torch.tensor([[1.0, 2.0, 3.0], [4.0, float("nan"), float("inf")], [9.0, 9.0, 9.0]])
    mask = torch.tensor([[1, 1, 1], [1, 0, 0], [0, 0, 0]])  # third sequence has no response
    assert aggregate_loss(token_loss, mask, "token-mean").item() == pytest.approx(10 / 4)
    assert aggregate_loss(token_loss, mask, "seq-mean-token-mean").item() == pytest.approx((2 + 4) / 2)
    assert aggregate_loss(token_loss, mask, "seq-mean-token-sum").item() == pytest.approx((6 + 4) / 2)
    assert local_normalizer(mask, "token-mean").item() == 4
    assert local_normalizer(mask, "seq-mean-token-sum").item() == 2
    assert aggregate_loss(token_loss, torch.zeros(3, 3), "token-mean").item() == 0.0


def _batch(seed=0, batch=6, width=7):
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([7, 3, 5, 1, 6, 2])[:batch]
    mask = torch.arange(width)[None, :] < lengths[:, None]
    old = -torch.rand(batch, width, generator=gen) * 3
    lp = old + 0.3 * torch.randn(batch, width, generator=gen)
    sampler = old + 0.1 * torch.randn(batch, width, generator=gen)
    sampler = torch.where(mask, sampler, -torch.inf)
    adv = torch.randn(batch, generator=gen)
    return lp, old, sampler, adv, mask


@pytest.mark.parametrize("loss_name", LOSSES)
@pytest.mark.parametrize("mode", AGG_MODES)
def test_two_ranks_with_global_normalizer_equal_one_rank(loss_name, mode):
    """Megatron style: each rank divides its sum by the global count; summing the rank
    losses (and gradients) reproduces the loss over the whole batch on one rank."""
    lp, old, sampler, adv, mask = _batch()
    # bands wide enough that some sequences are kept, so the gradients compared are not all 0
    cfg = PolicyLossConfig(loss=loss_name, loss_agg_mode=mode,
                           mismatch_correction="none" if loss_name == "tbpo" else "tis",
                           gspo=GSPOConfig(0.1, 0.1),
                           tbpo=TBPOConfig(seq_clip_ratio_high=0.1, neg_seq_clip_ratio_low=0.1,
                                           neg_seq_clip_ratio_high=0.1))
    full_lp = lp.clone().requires_grad_()
    full_loss, _ = compute_policy_loss(cfg, full_lp, old, adv, mask, sampler)
    full_loss.backward()
    assert torch.count_nonzero(full_lp.grad) > 0

    ranks = [slice(0, 2), slice(2, 6)]  # unequal shards, as dynamic batching gives
    global_count = sum(local_normalizer(mask[r], mode) for r in ranks)  # the all-reduce
    rank_losses, rank_grads = [], []
    for r in ranks:
        rank_lp = lp[r].clone().requires_grad_()
        loss, _ = compute_policy_loss(cfg, rank_lp, old[r], adv[r], mask[r], sampler[r],
                                      normalizer=global_count)
        loss.backward()
        rank_losses.append(loss)
        rank_grads.append(rank_lp.grad)
    torch.testing.assert_close(sum(rank_losses), full_loss, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(torch.cat(rank_grads), full_lp.grad, rtol=1e-5, atol=1e-8)
