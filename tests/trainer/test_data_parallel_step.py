"""One optimizer step (trainer.updates.optimizer_step: the policy loss per micro-batch, its
backward scaled by the data-parallel size, Megatron DDP's gradient average, Adam) over two
gloo data-parallel ranks holding half the rows each equals the step one process takes over
all of them: the mini-batch loss, the gradient norm and the updated weights. Nothing else
checked the scaling that undoes DDP's average (a factor 2 off here, and Adam's first step
hides it in the weights but not in the clipped norm)."""
import os
import sys
from types import SimpleNamespace

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "megatron"))
from tiny_qwen3 import build_tiny  # noqa: E402

from megatron_qarl.compat.cpu_testing import init_parallel, run_distributed  # noqa: E402

ROWS = 4


def _batch():
    from megatron_qarl.rollout.base import Sample
    from megatron_qarl.trainer.batches import collate

    g = torch.Generator().manual_seed(0)
    samples = []
    for length in (3, 5, 2, 4):
        prompt = torch.randint(1, 100, (3,), generator=g).tolist()
        response = torch.randint(1, 100, (length,), generator=g).tolist()
        samples.append(Sample(prompt, response, (-torch.rand(length, generator=g)).tolist(),
                              "stop"))
    batch = collate(samples, torch.tensor([1.0, -0.5, 0.25, -1.0]), pad_id=0, device="cpu")
    batch.old_logprobs = torch.where(batch.mask, batch.sampler_logprobs - 0.01, 0.0)
    return batch


def _step(rank, world_size):
    from megatron_qarl.rl.objectives import PolicyLossConfig, compute_policy_loss
    from megatron_qarl.rl.objectives.aggregation import local_normalizer
    from megatron_qarl.trainer.logprobs import response_logprobs
    from megatron_qarl.trainer.lr_schedule import LrSchedule
    from megatron_qarl.trainer.optimizer import build_optimizer, wrap_ddp
    from megatron_qarl.trainer.updates import optimizer_step

    init_parallel(tp=1, ep=1)
    model = build_tiny("w4a16-g32", targets="experts")
    ddp = wrap_ddp(model, model.config, use_distributed_optimizer=False)
    args = SimpleNamespace(optimizer="adam", weight_decay=0.0, adam_beta1=0.9, adam_beta2=0.999,
                           adam_eps=1e-8, clip_grad=1.0, bf16=False,
                           use_distributed_optimizer=False, muon_momentum=0.95,
                           muon_use_nesterov=False, muon_scale_mode="spectral",
                           muon_num_ns_steps=5, muon_extra_scale_factor=1.0,
                           muon_fp32_matmul_prec="medium")
    optimizer, scheduler = build_optimizer(args, ddp,
                                           LrSchedule(1e-3, 0.0, 0.0, 0, 1, "constant"))
    cfg = PolicyLossConfig(loss="tbpo")

    def loss_fn(micro, normalizer):
        logprobs = response_logprobs(ddp, micro, 1.0)
        loss, _ = compute_policy_loss(cfg, logprobs, micro.old_logprobs, micro.advantages,
                                      micro.mask, micro.sampler_logprobs, normalizer=normalizer)
        return loss, {}

    share = ROWS // world_size
    metrics, _ = optimizer_step(
        ddp, optimizer, _batch(), list(range(rank * share, (rank + 1) * share)),
        scheduler=scheduler, micro_batch_size=1, max_tokens=0, loss_fn=loss_fn,
        normalizer=lambda mask: local_normalizer(mask, cfg.loss_agg_mode), loss_name="pg_loss")
    weights = {n: p.detach().clone() for n, p in model.named_parameters()}
    return metrics, weights


def test_two_data_parallel_ranks_step_as_one_process_over_all_rows():
    (one, one_weights), = run_distributed(_step, 1)
    both = run_distributed(_step, 2)
    for metrics, weights in both:
        assert abs(metrics["pg_loss"] - one["pg_loss"]) <= 1e-6 * max(1.0, abs(one["pg_loss"]))
        assert abs(metrics["grad_norm"] - one["grad_norm"]) <= 1e-4 * one["grad_norm"]
        for name, value in one_weights.items():
            torch.testing.assert_close(weights[name], value, rtol=1e-4, atol=1e-6, msg=name)
    assert one["grad_norm"] > 0


def _rollout_digest(rank, world_size):
    from megatron_qarl.trainer.distributed import data_parallel_sha1

    init_parallel(tp=1, ep=1)
    return data_parallel_sha1([("rank", rank)])


def test_the_rollout_hash_covers_every_data_parallel_ranks_samples():
    """rollout_sha1 hashed rank 0's share alone: another rank's diverging rollouts went
    unseen by the determinism and resume checks that compare it. One spawned run (each costs
    ~13 s of CI): every rank logs the hash of both ranks' digests, rank 1's included."""
    import hashlib

    both = run_distributed(_rollout_digest, 2)
    parts = [hashlib.sha1(repr([("rank", r)]).encode()).hexdigest() for r in (0, 1)]
    assert both == [hashlib.sha1("".join(parts).encode()).hexdigest()] * 2
