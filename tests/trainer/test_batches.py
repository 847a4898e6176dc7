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
    # trimmed to its own rows' longest sequence, not the batch's
    assert select(batch, [1]).input_ids.tolist() == [[5, 4, 3, 2]]


def test_token_budget_buckets_by_length_and_fits():
    lengths = [5, 30, 6, 28, 7, 31, 5, 8]
    chunks = micro_batch_rows(lengths, micro_batch_size=1, max_tokens=32)
    assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
    for chunk in chunks:
        assert len(chunk) * max(lengths[i] for i in chunk) <= 32
    assert len(chunks) == 5  # the 4 shortest together, then one row each
    fixed = micro_batch_rows(lengths, micro_batch_size=4, max_tokens=0)
    assert [len(c) for c in fixed] == [4, 4]
    # a micro-batch may fill the budget exactly
    assert micro_batch_rows([8, 8, 8, 8], micro_batch_size=1, max_tokens=32) == [[0, 1, 2, 3]]


def test_token_budget_halves_the_largest_chunks_to_the_ranks_most(monkeypatch):
    """Every data-parallel rank makes as many micro-batches as the rank with the most (MoE's
    all-to-all needs matching calls): here 8 short rows fit one, another rank needs 4, so the
    largest chunk is halved until there are 4 of 2 rows, every row in one."""
    from megatron_qarl.trainer import batches

    reduced = []

    def all_reduce(t, op, group):  # the other rank's count is 4
        reduced.append((op, group))
        t.fill_(max(int(t), 4) if op == batches.dist.ReduceOp.MAX else min(int(t), 4))

    monkeypatch.setattr(batches.dist, "is_initialized", lambda: True)
    monkeypatch.setattr(batches.dist, "get_backend", lambda group: "gloo")
    monkeypatch.setattr(batches.dist, "all_reduce", all_reduce)
    chunks = micro_batch_rows([2] * 8, micro_batch_size=1, max_tokens=16, group="dp")
    assert reduced == [(batches.dist.ReduceOp.MAX, "dp")]
    assert [len(c) for c in chunks] == [2, 2, 2, 2]
    assert sorted(i for c in chunks for i in c) == list(range(8))


def _single_rank_updates(monkeypatch):
    """trainer.updates on one rank without Megatron's parallel state or gradient buffers."""
    from megatron.core.transformer.moe.moe_utils import MoEAuxLossAutoScaler

    from megatron_qarl.trainer import updates

    # the routers' loss scale is Megatron's process-wide setting: restored after the test
    monkeypatch.setattr(MoEAuxLossAutoScaler, "main_loss_backward_scale", None)
    monkeypatch.setattr(updates.parallel_state, "get_data_parallel_world_size", lambda: 1)
    monkeypatch.setattr(updates.parallel_state, "get_data_parallel_group", lambda: None)
    monkeypatch.setattr(updates, "all_reduce_sum", lambda value: value)
    monkeypatch.setattr(updates, "finalize_model_grads", lambda models: None)
    return updates


class _Schedule:
    """Megatron's OptimizerParamScheduler as optimizer_step uses it: lr 1 / (2 + updates)."""
    updates = 0

    def get_lr(self, param_group):
        return 1 / (2 + self.updates)

    def step(self, increment):
        self.updates += increment


@pytest.mark.parametrize("loss_value, grad_norm", [(float("nan"), None), (1.0, float("inf")),
                                                   (float("nan"), float("nan"))])
def test_a_non_finite_step_stops_the_run(monkeypatch, loss_value, grad_norm):
    """Without a loss scaler Megatron's optimizer steps on NaN gradients and reports success:
    the run went on with NaN weights and saved them."""
    updates = _single_rank_updates(monkeypatch)
    weight = torch.nn.Parameter(torch.ones(()))
    model = SimpleNamespace(zero_grad_buffer=lambda: None)
    optimizer = SimpleNamespace(zero_grad=lambda: None, step=lambda: (True, grad_norm, None))
    batch = collate([Sample([1], [2], [-0.5], "stop")], torch.ones(1), pad_id=0, device="cpu")
    with pytest.raises(FloatingPointError, match="non-finite step .* stops before saving"):
        updates.optimizer_step(model, optimizer, batch, [0], scheduler=_Schedule(),
                               micro_batch_size=1, max_tokens=0,
                               loss_fn=lambda micro, total: (weight * loss_value, {}),
                               normalizer=lambda mask: mask.sum(), loss_name="pg_loss")


def test_an_optimizer_step_reports_the_mini_batch_loss_and_weights_the_routers_loss(monkeypatch):
    """Each micro-batch's loss is its share of the mini-batch's token mean: the reported loss
    is their sum (logged before as their mean, 1 / micro-batches of it), and the routers'
    load-balancing loss, a mean per micro-batch, is weighted 1 / micro-batches as in
    Megatron's schedules (its gradient grew with the micro-batch count). The token values come
    back for the whole mini-batch at once, each row in its place (diagnostics were means of
    micro-batch means, which weigh a sequence by its micro-batch's size)."""
    from megatron.core.transformer.moe.moe_utils import MoEAuxLossAutoScaler

    updates = _single_rank_updates(monkeypatch)
    weight = torch.nn.Parameter(torch.ones(()))
    model = SimpleNamespace(zero_grad_buffer=lambda: None)
    optimizer = SimpleNamespace(zero_grad=lambda: None, step=lambda: (True, 1.0, None))
    samples = [Sample([1], [2] * n, [-0.5] * n, "stop") for n in (1, 2, 3, 6)]
    batch = collate(samples, torch.tensor([1.0, 2.0, 3.0, 4.0]), pad_id=0, device="cpu")

    def loss_fn(micro, total):  # every response token costs 1: the token mean is 1
        loss = weight * micro.mask.sum() / total
        # each token carries its row's advantage, in a micro-batch as wide as its own row
        return loss, {"advantage": torch.where(micro.mask, micro.advantages[:, None], 0.0)}

    rows = [3, 1, 0, 2]
    schedule = _Schedule()
    metrics, values = updates.optimizer_step(
        model, optimizer, batch, rows, scheduler=schedule, micro_batch_size=1, max_tokens=0,
        loss_fn=loss_fn, normalizer=lambda mask: mask.sum(), loss_name="pg_loss")
    # the lr the update ran at, then the schedule moved on by one update
    assert metrics == {"pg_loss": pytest.approx(1.0), "grad_norm": 1.0, "lr": 0.5}
    assert schedule.updates == 1
    mini = select(batch, rows)
    assert torch.equal(values["advantage"], torch.where(mini.mask, mini.advantages[:, None], 0.0))
    assert MoEAuxLossAutoScaler.main_loss_backward_scale.item() == pytest.approx(1 / 4)


def test_old_logprobs_are_computed_in_eval_mode_as_the_engine_samples(monkeypatch):
    """The engine samples in eval mode; the old-logprob forward that recomputes the sampler's
    distribution runs in it too (it ran in train mode: equal only while the model has no
    dropout), and training resumes in train mode."""
    from megatron_qarl.trainer import trainer as trainer_module

    model = torch.nn.Linear(1, 1)
    modes = []

    def fake_logprobs(model_, micro, temperature, length_multiple):
        modes.append(model_.training)
        return torch.where(micro.mask, -1.0, 0.0)

    monkeypatch.setattr(trainer_module, "response_logprobs", fake_logprobs)
    samples = [Sample([1], [2] * n, [-0.5] * n, "stop") for n in (1, 3, 2)]
    batch = collate(samples, torch.zeros(3), pad_id=0, device="cpu")
    args = SimpleNamespace(micro_batch_size=2, logprob_max_tokens_per_micro_batch=0,
                           max_tokens_per_micro_batch=0, rollout_temperature=1.0)
    fake_trainer = SimpleNamespace(args=args, model=model, _sequence_multiple=lambda: 1)
    out = trainer_module.RLTrainer._logprobs(fake_trainer, batch)
    assert modes == [False, False] and model.training
    assert torch.equal(out, torch.where(batch.mask, -1.0, 0.0))
