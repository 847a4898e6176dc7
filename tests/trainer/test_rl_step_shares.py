"""What each data-parallel rank of an RL step takes and reports: its own slice of the step's
prompts and of the held-out ones, optimizer updates of --global-batch-size / DP rows with their
metrics averaged over the updates, the stop fraction and the token rate of every rank's tokens,
and old logprobs put back in their rows when a token budget buckets them by length. The other
trainer tests run one rank, one update, rows in order: each of these, miswired, passed them (a
review's mutations)."""
from contextlib import nullcontext
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.rollout.base import RolloutEngine, Sample
from megatron_qarl.trainer import trainer as trainer_module
from megatron_qarl.trainer.batches import collate, select


class _Engine(RolloutEngine):
    """Response tokens: the prompt's own id, then 10 + the sample's index; sample 0 of prompt 3
    ran to its length limit, every other one stopped."""

    def __init__(self):
        self.prompts, self.loaded = [], []

    def generate(self, prompts, params):
        self.prompts.extend(p[0] for p in prompts)
        return [[Sample(p, [p[0], 10 + i], [-0.1, -0.2],
                        "length" if (p[0], i) == (3, 0) else "stop") for i in range(2)]
                for p in prompts]

    def publish_weights(self, model, version):
        pass

    def state_dict(self):
        return {"seed": 7}

    def load_state_dict(self, state):
        self.loaded.append(state)


class _Timer:
    """The step took 2 s in all."""

    seconds = {"rollout": 1.5, "train": 0.5}

    def phase(self, name):
        return nullcontext()

    def metrics(self):
        return {}


def _single_process(monkeypatch, rank, size):
    monkeypatch.setattr(trainer_module, "dp_rank_and_size", lambda: (rank, size))
    # every rank's values alike: their mean over ranks is this rank's
    monkeypatch.setattr(trainer_module, "all_reduce_metrics", lambda metrics, device: metrics)
    monkeypatch.setattr(trainer_module, "data_parallel_sha1", lambda items: repr(items))


@pytest.mark.parametrize("rank", [0, 1])
def test_each_rank_samples_its_own_prompts_and_reports_every_ranks_tokens(monkeypatch, rank):
    """Rollout batch 4 over 2 ranks: rank r takes the step's prompts 2r and 2r + 1, in order.
    Its 4 samples hold 2 prompt and 2 response tokens each: 16 tokens a rank, 32 over both
    ranks in the step's 2 s; 1 of rank 1's 4 samples ran to its length limit."""
    _single_process(monkeypatch, rank, 2)
    monkeypatch.setattr(trainer_module, "PhaseTimer", _Timer)
    engine = _Engine()
    fake = SimpleNamespace(
        args=SimpleNamespace(rollout_batch_size=4, n_samples_per_prompt=2,
                             advantage_std_norm=True, rollout_routing_replay=False),
        order=SimpleNamespace(next_indices=lambda n: [2, 0, 3, 1]),
        train_rows=[SimpleNamespace(prompt_ids=[i, 99], answer=i) for i in range(4)],
        engine=engine, sampling=None, reward_fn=lambda text, answer: 0.0, device="cpu",
        model=None, tokenizer=SimpleNamespace(pad_id=0, decode=lambda ids: ""),
        _rl_optimizer=lambda: None, _logprobs=lambda batch: batch.sampler_logprobs.clone(),
        _train=lambda batch, optimizer: ({}, {}), _diagnostics=lambda batch, values: {})
    metrics = trainer_module.RLTrainer.rl_step(fake, step=1)
    assert engine.prompts == [[2, 0], [3, 1]][rank]
    assert metrics["prompt_indices"] == [2, 0, 3, 1]  # the step's, on every rank
    assert metrics["response_stop_frac"] == [1.0, 0.75][rank]
    assert metrics["response_length_mean"] == 2.0  # per sample, not per prompt
    assert metrics["tokens_per_s"] == pytest.approx(32 / 2.0)


def _batch(lengths):
    """One response per length; row b's sampler logprobs are -(b + 1) - 0.01 j."""
    samples = [Sample([1], [2] * n, [-(b + 1) - 0.01 * j for j in range(n)], "stop")
               for b, n in enumerate(lengths)]
    batch = collate(samples, torch.arange(len(lengths), dtype=torch.float32), pad_id=0,
                    device="cpu")
    batch.old_logprobs = batch.sampler_logprobs.clone()
    return batch


def test_each_rank_updates_on_its_share_of_the_global_batch_and_averages_them(monkeypatch):
    """--global-batch-size 4 over 2 ranks holding 4 rows each: 2 updates of 2 rows a rank,
    every row in one of them, and the step's pg_loss and grad_norm the updates' mean."""
    _single_process(monkeypatch, 0, 2)
    reported = iter([{"pg_loss": 1.0, "grad_norm": 2.0}, {"pg_loss": 3.0, "grad_norm": 6.0}])
    updates = []

    def optimizer_step(model, optimizer, batch_, rows, *, scheduler, loss_fn, normalizer, **_):
        assert scheduler == "RL's lr scheduler"
        updates.append(list(rows))
        micro = select(batch_, rows)
        return next(reported), loss_fn(micro, normalizer(micro.mask))[1]

    monkeypatch.setattr(trainer_module, "optimizer_step", optimizer_step)
    monkeypatch.setattr(trainer_module, "response_logprobs",
                        lambda model, micro, *a, **k: (micro.old_logprobs, micro.mask * 0.0))
    monkeypatch.setattr(trainer_module, "compute_policy_loss",
                        lambda *a, **k: (torch.zeros(()), {}))
    fake = SimpleNamespace(
        args=SimpleNamespace(global_batch_size=4, micro_batch_size=1,
                             max_tokens_per_micro_batch=0, rollout_temperature=1.0),
        loss_cfg=SimpleNamespace(loss_agg_mode="token-mean"), model=None,
        lr_scheduler="RL's lr scheduler", _sequence_multiple=lambda: 1)
    batch = _batch([1, 3, 2, 4])
    torch.manual_seed(0)
    metrics, values = trainer_module.RLTrainer._train(fake, batch, optimizer=None)
    assert [len(rows) for rows in updates] == [2, 2]
    assert sorted(r for rows in updates for r in rows) == [0, 1, 2, 3]
    assert metrics == {"pg_loss": pytest.approx(2.0), "grad_norm": pytest.approx(4.0)}
    assert torch.equal(values["logprobs"], batch.old_logprobs)  # each row in its place


def test_old_logprobs_bucketed_by_length_go_back_to_their_rows(monkeypatch):
    """A token budget (--logprob-max-tokens-per-micro-batch) sorts rows by length, so a
    micro-batch's rows are not contiguous: each row's logprobs land in its own row."""
    monkeypatch.setattr(trainer_module.parallel_state, "get_data_parallel_group", lambda: None)
    scored = []

    def response_logprobs(model, micro, temperature, length_multiple):
        scored.append(micro.mask.shape[0])
        return torch.where(micro.mask, micro.sampler_logprobs, 0.0)

    monkeypatch.setattr(trainer_module, "response_logprobs", response_logprobs)
    batch = _batch([4, 1, 3, 1, 2])
    args = SimpleNamespace(micro_batch_size=1, logprob_max_tokens_per_micro_batch=8,
                           max_tokens_per_micro_batch=0, rollout_temperature=1.0)
    fake = SimpleNamespace(args=args, model=torch.nn.Linear(1, 1), _sequence_multiple=lambda: 1)
    out = trainer_module.RLTrainer._logprobs(fake, batch)
    assert scored == [2, 2, 1]  # rows [1, 3], [4, 2] (2 x 4 tokens: the budget), then [0]
    assert torch.equal(out, torch.where(batch.mask, batch.sampler_logprobs, 0.0))


def test_each_rank_evaluates_its_share_of_the_held_out_prompts(monkeypatch):
    """5 held-out prompts over 2 ranks: rank 1 decodes prompts 1 and 3 only (the ranks' shares
    together are every prompt once), and the sampler's state is restored after."""
    _single_process(monkeypatch, 1, 2)
    engine = _Engine()
    fake = SimpleNamespace(
        args=SimpleNamespace(eval_temperature=0, rollout_max_new_tokens=4),
        eval_rows=[SimpleNamespace(prompt_ids=[i, 99], answer=i) for i in range(5)],
        engine=engine, device="cpu",
        tokenizer=SimpleNamespace(stop_ids=(0,), decode=lambda ids: str(ids[0])),
        reward_fn=lambda text, answer: float(text == str(answer)) * answer)
    reward = trainer_module.RLTrainer.evaluate(fake)
    assert engine.prompts == [1, 3]
    assert reward == pytest.approx((1 + 1 + 3 + 3) / 4)  # this rank's 4 samples' mean
    assert engine.loaded == [{"seed": 7}]
