"""Collation of rollout samples, micro-batches bucketed by tokens, and one optimizer step's
loss over them."""
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.rollout.base import Sample
from megatron_qarl.trainer.batches import collate, micro_batch_rows, select


def test_collate_aligns_response_tokens_with_their_predicting_position():
    samples = [Sample([5, 6, 7], [8, 9], [-0.5, -0.25], "stop"),
               Sample([5], [4, 3, 2], [-1.0, -2.0, -3.0], "length")]
    batch = collate(samples, torch.tensor([1.0, -1.0]), pad_id=0, device="cpu")
    assert batch.input_ids.tolist() == [[5, 6, 7, 8, 9], [5, 4, 3, 2, 0]]
    assert batch.mask.tolist() == [[True, True, False], [True, True, True]]
    for b in range(2):
        for j in range(int(batch.mask[b].sum())):
            # the logits at predict_pos[b, j] predict input_ids[b, predict_pos + 1]
            assert batch.input_ids[b, batch.predict_pos[b, j] + 1] == batch.targets[b, j]
    part = select(batch, [0])
    assert part.input_ids.tolist() == [[5, 6, 7, 8, 9]] and part.mask.shape == (1, 2)
    assert part.sampler_logprobs.tolist() == [[-0.5, -0.25]]


def test_token_budget_buckets_by_length_and_fits():
    lengths = [5, 30, 6, 28, 7, 31, 5, 8]
    chunks = micro_batch_rows(lengths, micro_batch_size=1, max_tokens=32)
    assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
    for chunk in chunks:
        assert len(chunk) * max(lengths[i] for i in chunk) <= 32
    assert len(chunks) == 5  # the 4 shortest together, then one row each
    fixed = micro_batch_rows(lengths, micro_batch_size=4, max_tokens=0)
    assert [len(c) for c in fixed] == [4, 4]


def test_an_optimizer_step_reports_the_mini_batch_loss_and_weights_the_routers_loss(monkeypatch):
    """Each micro-batch's loss is its share of the mini-batch's token mean: the reported loss
    is their sum (logged before as their mean, 1 / micro-batches of it), and the routers'
    load-balancing loss, a mean per micro-batch, is weighted 1 / micro-batches as in
    Megatron's schedules (its gradient grew with the micro-batch count)."""
    from megatron.core.transformer.moe.moe_utils import MoEAuxLossAutoScaler

    from megatron_qarl.trainer import updates

    # the routers' loss scale is Megatron's process-wide setting: restored after the test
    monkeypatch.setattr(MoEAuxLossAutoScaler, "main_loss_backward_scale", None)
    monkeypatch.setattr(updates.parallel_state, "get_data_parallel_world_size", lambda: 1)
    monkeypatch.setattr(updates.parallel_state, "get_data_parallel_group", lambda: None)
    monkeypatch.setattr(updates, "all_reduce_sum", lambda value: value)
    monkeypatch.setattr(updates, "finalize_model_grads", lambda models: None)
    weight = torch.nn.Parameter(torch.ones(()))
    model = SimpleNamespace(zero_grad_buffer=lambda: None)
    optimizer = SimpleNamespace(zero_grad=lambda: None, step=lambda: (True, 1.0, None))
    samples = [Sample([1], [2] * n, [-0.5] * n, "stop") for n in (1, 2, 3, 6)]
    batch = collate(samples, torch.zeros(4), pad_id=0, device="cpu")

    def loss_fn(micro, total):  # every response token costs 1: the token mean is 1
        loss = weight * micro.mask.sum() / total
        tokens = micro.mask.sum().float()
        return loss, {"pg_loss": loss.detach(), "tokens": tokens, "tokens_max": tokens,
                      "tokens_min": tokens}

    metrics = updates.optimizer_step(model, optimizer, batch, [0, 1, 2, 3], micro_batch_size=1,
                                     max_tokens=0, loss_fn=loss_fn,
                                     normalizer=lambda mask: mask.sum(), loss_name="pg_loss")
    assert metrics["pg_loss"] == pytest.approx(1.0)
    assert metrics["tokens"] == pytest.approx(12 / 4)  # other metrics: micro-batch means,
    assert (metrics["tokens_min"], metrics["tokens_max"]) == (1, 6)  # extremes: extremes
    assert MoEAuxLossAutoScaler.main_loss_backward_scale.item() == pytest.approx(1 / 4)
