"""What one RL step feeds its loss: each response scored against its own prompt's answer,
advantages as --advantage-std-norm says, and the objective's old and sampler logprobs each in
its place. Each of these, miswired, passed every trainer test (a review's mutations): the
end-to-end runs check only that training moves."""
import math
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.rollout.base import RolloutEngine, Sample
from megatron_qarl.trainer import trainer as trainer_module
from megatron_qarl.trainer.batches import collate, select

SAMPLES = 2
#: (prompt, sample) -> reward: prompt 2's responses 0 and 2, prompt 0's 1 and 0, prompt 1's 3, 3
REWARDS = {(2, 0): 0.0, (2, 1): 2.0, (0, 0): 1.0, (0, 1): 0.0, (1, 0): 3.0, (1, 1): 3.0}


class _Engine(RolloutEngine):
    """Response tokens: the prompt's own id, then 10 + the sample's index."""

    def generate(self, prompts, params):
        return [[Sample(p, [p[0], 10 + i], [-0.1, -0.2], "stop") for i in range(SAMPLES)]
                for p in prompts]

    def publish_weights(self, model, version):
        pass


def _reward(text, answer):
    prompt, sample = (int(t) for t in text.split())
    assert prompt == answer, f"prompt {prompt}'s response scored against answer {answer}"
    return REWARDS[(prompt, sample - 10)]


@pytest.mark.parametrize("std_norm", [True, False])
def test_rewards_pair_with_their_prompts_and_advantages_follow_the_flag(monkeypatch, std_norm):
    monkeypatch.setattr(trainer_module, "dp_rank_and_size", lambda: (0, 1))
    monkeypatch.setattr(trainer_module, "all_reduce_metrics", lambda metrics, device: metrics)
    # one rank: its own samples' digest (the test ran only after another had set up Megatron's
    # data-parallel group on the same worker)
    monkeypatch.setattr(trainer_module, "data_parallel_sha1", lambda items: repr(items))
    trained = []
    fake = SimpleNamespace(
        args=SimpleNamespace(rollout_batch_size=3, n_samples_per_prompt=SAMPLES,
                             advantage_std_norm=std_norm, rollout_routing_replay=False),
        order=SimpleNamespace(next_indices=lambda n: [2, 0, 1]),
        train_rows=[SimpleNamespace(prompt_ids=[i, 99], answer=i) for i in range(3)],
        engine=_Engine(), sampling=None, reward_fn=_reward, device="cpu", model=None,
        tokenizer=SimpleNamespace(pad_id=0, decode=lambda ids: " ".join(map(str, ids))),
        _rl_optimizer=lambda: None, _logprobs=lambda batch: batch.sampler_logprobs.clone(),
        _train=lambda batch, optimizer: (trained.append(batch) or {"grad_norm": 1.0}, {}),
        _diagnostics=lambda batch, values: {"ratio_token_mean": 1.25})
    metrics = trainer_module.RLTrainer.rl_step(fake, step=1)
    assert metrics["reward_mean"] == pytest.approx(sum(REWARDS.values()) / 6)
    assert (metrics["grad_norm"], metrics["ratio_token_mean"]) == (1.0, 1.25)  # both merged
    assert metrics["rollout_sha1"] == repr([([p, 99], [p, 10 + i]) for p in (2, 0, 1)
                                            for i in range(SAMPLES)])
    # groups in rollout order: [0, 2], [1, 0], [3, 3]; Bessel's std: sqrt(2), sqrt(1/2)
    want = torch.tensor([-1.0, 1.0, 0.5, -0.5, 0.0, 0.0])
    if std_norm:
        want /= torch.tensor([math.sqrt(2)] * 2 + [math.sqrt(0.5)] * 2 + [1.0] * 2)
    torch.testing.assert_close(trained[0].advantages, want, rtol=1e-5, atol=1e-5)


def _one_micro_batch(model, optimizer, batch_, rows, *, loss_fn, normalizer, **_):
    """optimizer_step without a model: the update's rows in one micro-batch, no metrics."""
    micro = select(batch_, rows)
    return {}, loss_fn(micro, normalizer(micro.mask))[1]


def test_the_objective_gets_old_and_sampler_logprobs_in_their_places(monkeypatch):
    """Swapped, the proximal ratio and the mismatch weight trade roles."""
    samples = [Sample([1], [2, 3], [-2.0, -2.0], "stop") for _ in range(2)]
    batch = collate(samples, torch.tensor([1.0, -1.0]), pad_id=0, device="cpu")
    batch.old_logprobs = torch.where(batch.mask, -1.0, 0.0)
    seen = []

    def spy(cfg, logprobs, old, advantages, mask, sampler, normalizer=None):
        seen.append((old, sampler, advantages))
        return logprobs.sum() * 0, {"pg_loss": torch.tensor(0.0)}

    monkeypatch.setattr(trainer_module, "compute_policy_loss", spy)
    monkeypatch.setattr(trainer_module, "optimizer_step", _one_micro_batch)
    monkeypatch.setattr(trainer_module, "dp_rank_and_size", lambda: (0, 1))
    monkeypatch.setattr(trainer_module, "response_logprobs",
                        lambda model, micro, *a, **k: (micro.old_logprobs * 0, micro.mask * 0.0))
    fake = SimpleNamespace(
        args=SimpleNamespace(global_batch_size=2, micro_batch_size=2,
                             max_tokens_per_micro_batch=0, rollout_temperature=1.0),
        loss_cfg=SimpleNamespace(loss_agg_mode="token-mean"), model=None, lr_scheduler=None,
        _sequence_multiple=lambda: 1)
    _, values = trainer_module.RLTrainer._train(fake, batch, optimizer=None)
    trainer_module.RLTrainer._diagnostics(fake, batch, values)
    assert len(seen) == 2  # the trained loss and the diagnostics
    for old, sampler, advantages in seen:
        assert torch.equal(old[batch.mask], torch.full((4,), -1.0))
        assert torch.equal(sampler[batch.mask], torch.full((4,), -2.0))
        assert sorted(advantages.tolist()) == [-1.0, 1.0]


def test_the_learner_scores_at_the_rollout_temperature(monkeypatch):
    """Old and trained logprobs at --rollout-temperature, the distribution the sampler drew
    from: every other test runs at 1.0, where a learner scoring at 1 passed (a review's
    mutations of _logprobs and of _train)."""
    samples = [Sample([1], [2, 3], [-2.0, -2.0], "stop") for _ in range(2)]
    batch = collate(samples, torch.tensor([1.0, -1.0]), pad_id=0, device="cpu")
    batch.old_logprobs = torch.where(batch.mask, -1.0, 0.0)
    temperatures = []

    def scored(model, micro, temperature, multiple, with_entropy=False):
        temperatures.append(temperature)
        logprobs = micro.sampler_logprobs.clone().requires_grad_(with_entropy)
        return (logprobs, torch.zeros_like(logprobs)) if with_entropy else logprobs.detach()

    monkeypatch.setattr(trainer_module, "response_logprobs", scored)
    monkeypatch.setattr(trainer_module, "optimizer_step", _one_micro_batch)
    monkeypatch.setattr(trainer_module, "dp_rank_and_size", lambda: (0, 1))
    from megatron_qarl.rl.objectives.config import PolicyLossConfig

    fake = SimpleNamespace(
        args=SimpleNamespace(global_batch_size=2, micro_batch_size=2, rollout_temperature=0.7,
                             max_tokens_per_micro_batch=0,
                             logprob_max_tokens_per_micro_batch=0),
        loss_cfg=PolicyLossConfig(loss="grpo"), model=torch.nn.Linear(1, 1), lr_scheduler=None,
        _sequence_multiple=lambda: 1)
    trainer_module.RLTrainer._logprobs(fake, batch)
    trainer_module.RLTrainer._train(fake, batch, optimizer=None)
    assert temperatures == [0.7, 0.7]  # one old-logprob pass, one trained micro-batch


def test_the_steps_diagnostics_weigh_every_token_once(monkeypatch):
    """Two updates of 1 and 5 tokens, at ratios 1 and 2: the step's ratio_token_mean is over
    its 6 tokens, 11 / 6 (it was the mean of the updates' means, 1.5), and the extremes are
    the step's; so is the entropy's mean (the shorter row's padding is no token)."""
    from megatron_qarl.rl.objectives.config import PolicyLossConfig

    samples = [Sample([1], [2] * n, [-1.0] * n, "stop") for n in (1, 5)]
    batch = collate(samples, torch.tensor([1.0, -1.0]), pad_id=0, device="cpu")
    batch.old_logprobs = torch.where(batch.mask, -1.0, 0.0)

    def new_policy(model, micro, *args, **kwargs):  # ratio 2 where the advantage is negative
        shift = torch.where(micro.advantages < 0, math.log(2.0), 0.0)[:, None]
        entropy = torch.where(micro.mask, 1.0 + (micro.advantages < 0)[:, None], 0.0)
        return micro.old_logprobs + shift, entropy

    def one_micro_batch(model, optimizer, batch_, rows, *, loss_fn, normalizer, **_):
        micro = select(batch_, rows)
        return {"pg_loss": 0.0}, loss_fn(micro, normalizer(micro.mask))[1]

    monkeypatch.setattr(trainer_module, "optimizer_step", one_micro_batch)
    monkeypatch.setattr(trainer_module, "dp_rank_and_size", lambda: (0, 1))
    monkeypatch.setattr(trainer_module, "response_logprobs", new_policy)
    fake = SimpleNamespace(
        args=SimpleNamespace(global_batch_size=1, micro_batch_size=1,
                             max_tokens_per_micro_batch=0, rollout_temperature=1.0),
        loss_cfg=PolicyLossConfig(loss="grpo"), model=None, lr_scheduler=None,
        _sequence_multiple=lambda: 1)
    metrics = trainer_module.RLTrainer._diagnostics(
        fake, batch, trainer_module.RLTrainer._train(fake, batch, optimizer=None)[1])
    assert metrics["ratio_token_mean"] == pytest.approx(11 / 6)
    assert metrics["ratio_token_min"] == pytest.approx(1.0)
    assert metrics["ratio_token_max"] == pytest.approx(2.0)
    assert metrics["ratio_seq_mean"] == pytest.approx(1.5)
    assert metrics["entropy"] == pytest.approx(11 / 6)  # entropies 1 and 2: padding left out


def _diagnostics_on(rank, init_file, out):
    """Rank 0: one response of 1 token at ratio 1, sampler logprob -1; rank 1: one of 5 tokens
    at ratio 2, sampler logprob -2."""
    import torch.distributed as dist
    from megatron.core import parallel_state

    from megatron_qarl.rl.objectives.config import PolicyLossConfig
    from megatron_qarl.rl.objectives.numerics import masked_max, masked_mean, masked_min, \
        reduced_over

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    parallel_state.get_data_parallel_group = lambda: None  # the whole (two-rank) world
    trainer_module.dp_rank_and_size = lambda: (rank, 2)
    n = (1, 5)[rank]
    batch = collate([Sample([1], [2] * n, [-1.0 - rank] * n, "stop")],
                    torch.tensor([1.0 - 2 * rank]), pad_id=0, device="cpu")
    batch.old_logprobs = torch.where(batch.mask, -1.0, 0.0)
    values = {"logprobs": batch.old_logprobs + math.log(1 + rank),
              "entropy": torch.where(batch.mask, float(rank), 0.0)}
    fake = SimpleNamespace(loss_cfg=PolicyLossConfig(loss="grpo"))
    out[rank] = trainer_module.RLTrainer._diagnostics(fake, batch, values)
    # rank 0 selects nothing: the others' statistics, not its zeros
    values, mask = torch.tensor([3.0, -4.0, 7.0]), torch.tensor([rank == 1, False, rank == 1])
    with reduced_over(None):
        out[f"empty {rank}"] = [float(f(values, mask))
                                for f in (masked_mean, masked_max, masked_min)]
        # a NaN selected on one rank is every rank's extreme, as it is within one rank
        values = torch.tensor([float("nan") if rank else 1.0, 2.0])
        out[f"nan {rank}"] = [float(f(values, torch.tensor([True, True])))
                              for f in (masked_max, masked_min)]
    dist.destroy_process_group()


def test_the_steps_diagnostics_weigh_every_ranks_tokens_once(tmp_path):
    """Data-parallel ranks hold as many sequences, not as many tokens: over ranks of 1 token at
    ratio 1 and 5 at ratio 2 every rank reports 11 / 6 (the mean of the ranks' means is
    1.5), entropies 0 and 1 give 5 / 6, sampler logprobs -1 and -2 give -11 / 6, the
    sequence mean stays 1.5 and the extremes are both ranks' (a NaN on one rank too)."""
    import torch.multiprocessing as mp

    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_diagnostics_on, args=(str(tmp_path / "init"), out), nprocs=2)
        assert out[0] == out[1]
        assert out[0]["ratio_token_mean"] == pytest.approx(11 / 6)
        assert out[0]["ratio_seq_mean"] == pytest.approx(1.5)
        assert out[0]["entropy"] == pytest.approx(5 / 6)
        assert out[0]["sampler_logprob_mean"] == pytest.approx(-11 / 6)
        assert out[0]["mismatch_k3_kl"] > 0  # learner -1 against sampler -2 on rank 1
        assert (out[0]["ratio_token_min"], out[0]["ratio_token_max"]) == pytest.approx((1, 2))
        assert out["empty 0"] == out["empty 1"] == [5.0, 7.0, 3.0]
        assert all(math.isnan(v) for rank in (0, 1) for v in out[f"nan {rank}"])
