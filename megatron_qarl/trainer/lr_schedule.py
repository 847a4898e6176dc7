"""The learning-rate schedule: Megatron's OptimizerParamScheduler (a linear warm-up from
--lr-warmup-init, then constant, linear, cosine or inverse-square-root decay to --min-lr),
stepped after every optimizer update as Megatron-LM's training loop steps it.

RL's schedule is counted in RL steps, --train-iters' unit: a step of U optimizer updates
advances it U units of 1/U step each, as Megatron-LM counts its iterations in samples. The warm
start has its own (--sft-lr-*), over its --sft-iters updates. Its position is a function of the
step and the flags, so a resume sets it from them (the flags win, as they do for --lr) rather
than from the checkpoint."""
from __future__ import annotations

from dataclasses import dataclass

from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler


@dataclass(frozen=True)
class LrSchedule:
    lr: float  # the peak, after the warm-up
    min_lr: float
    warmup_init: float
    warmup_updates: int
    decay_updates: int  # warm-up included, as Megatron counts them
    decay_style: str

    @classmethod
    def for_rl(cls, args) -> "LrSchedule":
        per_step = updates_per_rl_step(args)
        decay_iters = args.lr_decay_iters or args.train_iters
        return cls(args.lr, args.min_lr, args.lr_warmup_init, args.lr_warmup_iters * per_step,
                   max(decay_iters * per_step, 1), args.lr_decay_style)

    @classmethod
    def for_warm_start(cls, args) -> "LrSchedule":
        return cls(args.sft_lr, args.sft_min_lr, 0.0, args.sft_lr_warmup_iters,
                   max(args.sft_iters, 1), args.sft_lr_decay_style)

    def scheduler(self, optimizer, weight_decay: float,
                  updates_done: int = 0) -> OptimizerParamScheduler:
        """Megatron's scheduler for `optimizer`, `updates_done` updates in: it has set the next
        update's lr, and the weight decay with Megatron's per-group multipliers (norms and
        biases: wd_mult 0), in every param group."""
        scheduler = OptimizerParamScheduler(
            optimizer, init_lr=self.warmup_init, max_lr=self.lr, min_lr=self.min_lr,
            lr_warmup_steps=self.warmup_updates, lr_decay_steps=self.decay_updates,
            lr_decay_style=self.decay_style, start_wd=weight_decay, end_wd=weight_decay,
            wd_incr_steps=1, wd_incr_style="constant",
            use_checkpoint_opt_param_scheduler=False, override_opt_param_scheduler=True)
        scheduler.step(updates_done)
        return scheduler


def updates_per_rl_step(args) -> int:
    """Optimizer updates an RL step makes: its responses over --global-batch-size."""
    return args.rollout_batch_size * args.n_samples_per_prompt // args.global_batch_size
