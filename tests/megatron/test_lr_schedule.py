"""The lr schedules on a real Megatron optimizer: RL's counted in RL steps and applied per
optimizer update, the warm start's over its steps, and a resume placed at its update."""
import math

import pytest
from tiny_qwen3 import build_tiny, optimizer_flags

from megatron_qarl.layers.hooks import torch_optimizers
from megatron_qarl.trainer.lr_schedule import LrSchedule
from megatron_qarl.trainer.optimizer import apply_group_settings, build_optimizer, wrap_ddp

LR, MIN_LR = 1e-3, 1e-4


def _flags(**changed):
    """Two RL steps of 16 responses in updates of 8: two updates a step."""
    return optimizer_flags(**{**dict(
        lr=LR, min_lr=MIN_LR, lr_warmup_init=0.0, lr_warmup_iters=1, lr_decay_iters=0,
        lr_decay_style="cosine", train_iters=2, rollout_batch_size=4, n_samples_per_prompt=4,
        global_batch_size=8, sft_lr=2e-3, sft_min_lr=0.0, sft_lr_warmup_iters=2, sft_iters=3,
        sft_lr_decay_style="linear", weight_decay=0.1), **changed})


def test_the_schedules_count_their_phases_steps():
    assert LrSchedule.for_rl(_flags()) == LrSchedule(LR, MIN_LR, 0.0, 2, 4, "cosine")
    assert LrSchedule.for_rl(_flags(lr_decay_iters=5, lr_warmup_init=1e-5)) == \
        LrSchedule(LR, MIN_LR, 1e-5, 2, 10, "cosine")
    assert LrSchedule.for_rl(_flags(train_iters=0, lr_warmup_iters=0)).decay_updates == 1
    assert LrSchedule.for_warm_start(_flags()) == LrSchedule(2e-3, 0.0, 0.0, 2, 3, "linear")


def _groups(optimizer):
    return [g for o in torch_optimizers(optimizer) for g in o.param_groups]


def test_every_group_follows_megatrons_schedule_update_by_update(single_process):
    """Warm-up over step 1's two updates from 0, then cosine to MIN_LR by step 2's end; the
    weight decay stays at its flag in the decayed groups and 0 in the norms' and biases'."""
    model = build_tiny("none")
    args = _flags()
    optimizer, scheduler = build_optimizer(args, wrap_ddp(model, model.config, False),
                                           LrSchedule.for_rl(args))
    half_cosine = MIN_LR + 0.5 * (1 + math.cos(math.pi / 2)) * (LR - MIN_LR)
    expected = [0.0, LR / 2, LR, half_cosine, MIN_LR, MIN_LR]
    seen = []
    for _ in expected:
        assert {g["lr"] for g in _groups(optimizer)} == {scheduler.get_lr({})}
        seen.append(scheduler.get_lr({}))
        scheduler.step(1)
    assert seen == pytest.approx(expected, rel=1e-12, abs=0)
    decays = {g["weight_decay"] for g in _groups(optimizer)}
    assert decays == {0.0, 0.1}


def test_a_resume_goes_on_at_its_update_with_the_flags_values(single_process):
    """A checkpoint load restores the groups as saved (another run's lr among them):
    apply_group_settings sets them from the flags, at the resumed step's update."""
    model = build_tiny("none")
    args = _flags()
    schedule = LrSchedule.for_rl(args)
    optimizer, _ = build_optimizer(args, wrap_ddp(model, model.config, False), schedule)
    for g in _groups(optimizer):
        g.update(lr=1.0, max_lr=1.0, min_lr=1.0)
    scheduler = apply_group_settings(optimizer, schedule, args, updates_done=3)
    half_cosine = MIN_LR + 0.5 * (LR - MIN_LR)
    for g in _groups(optimizer):
        assert (g["max_lr"], g["min_lr"]) == (LR, MIN_LR)
        assert g["lr"] == pytest.approx(half_cosine, rel=1e-12)
    scheduler.step(1)
    assert {g["lr"] for g in _groups(optimizer)} == {MIN_LR}
