"""Megatron's DDP wrapper and optimizer, as Megatron-LM builds them: Adam or Muon, the paper's,
through Megatron's Muon chain. `--use-distributed-optimizer` shards over the data-parallel
ranks: for Adam, Megatron's distributed optimizer (slices of the DDP buffers); for Muon, which
orthogonalizes whole matrices, Megatron's layer-wise one (whole weights per rank, the updated
ones all-gathered after each step), as Megatron-LM's `--optimizer dist_muon` does."""
from __future__ import annotations

import torch
from megatron.core.distributed import (
    DistributedDataParallel,
    DistributedDataParallelConfig,
)
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler

from ..layers import install_quant_refresh_hook
from ..layers.hooks import torch_optimizers
from .lr_schedule import LrSchedule
from .muon import get_muon_optimizer


#: device types whose params get torch's fused Adam: CPU runs keep foreach, whose numbers the
#: CPU tests and the tiny example's documented runs are
FUSED_ADAM_DEVICE_TYPES = ("cuda",)


def use_fused_torch_adam(optimizer) -> int:
    """Without TransformerEngine or Apex, Megatron builds torch's Adam(W) with torch's default
    implementation, foreach: several passes over each param, its grad and both moments a step;
    the fused one makes the same update in one (H200, 1.38B params: 31.3 against 52.1 ms a
    step, docs/training.md). Megatron has no flag for it, so each torch Adam(W) whose params
    all lie on a FUSED_ADAM_DEVICE_TYPES device is switched here, before its first step (a fused
    optimizer keeps its step count on the params' device; checkpoints carry the flag in their
    param groups). Returns how many were switched."""
    switched = 0
    for adam in torch_optimizers(optimizer):
        params = [p for group in adam.param_groups for p in group["params"]]
        if not isinstance(adam, (torch.optim.Adam, torch.optim.AdamW)) or adam.state \
                or not params or any(p.device.type not in FUSED_ADAM_DEVICE_TYPES
                                     or not p.is_floating_point() for p in params):
            continue
        for settings in (adam.defaults, *adam.param_groups):
            settings.update(foreach=False, fused=True)
        switched += 1
    return switched


def shards_adam_buffers(args) -> bool:
    """Megatron's distributed optimizer: the DDP buffers are laid out for its shards."""
    return args.use_distributed_optimizer and args.optimizer == "adam"


def wrap_ddp(model, config, use_distributed_optimizer: bool) -> DistributedDataParallel:
    ddp_config = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True, overlap_grad_reduce=False,
        use_distributed_optimizer=use_distributed_optimizer,
    )
    return DistributedDataParallel(config=config, ddp_config=ddp_config, module=model)


def build_optimizer(args, ddp_model: DistributedDataParallel, schedule: LrSchedule):
    """The optimizer for `ddp_model`, with the quantized-weight cache refresh installed and,
    where Megatron fell back to torch's Adam on the GPU, torch's fused implementation; and its
    lr scheduler, which updates.optimizer_step steps after each update."""
    config = OptimizerConfig(
        optimizer="adam", lr=schedule.lr, min_lr=schedule.min_lr,
        weight_decay=args.weight_decay,
        adam_beta1=args.adam_beta1, adam_beta2=args.adam_beta2, adam_eps=args.adam_eps,
        clip_grad=args.clip_grad, bf16=args.bf16,
        params_dtype=torch.bfloat16 if args.bf16 else torch.float32,
        use_distributed_optimizer=shards_adam_buffers(args),
        muon_momentum=args.muon_momentum, muon_use_nesterov=args.muon_use_nesterov,
        muon_scale_mode=args.muon_scale_mode, muon_num_ns_steps=args.muon_num_ns_steps,
        muon_extra_scale_factor=args.muon_extra_scale_factor,
        muon_fp32_matmul_prec=args.muon_fp32_matmul_prec,
    )
    if args.optimizer == "muon":
        optimizer = get_muon_optimizer(config, [ddp_model],
                                       layer_wise=args.use_distributed_optimizer)
    else:
        optimizer = get_megatron_optimizer(config, [ddp_model])
    use_fused_torch_adam(optimizer)  # where Megatron fell back to torch's Adam (no TE/Apex)
    scheduler = apply_group_settings(optimizer, schedule, args)
    install_quant_refresh_hook(optimizer, ddp_model)
    return optimizer, scheduler


def apply_group_settings(optimizer, schedule: LrSchedule, args,
                         updates_done: int = 0) -> OptimizerParamScheduler:
    """Each param group's lr and weight decay from the schedule, `updates_done` updates in, with
    Megatron's per-group multipliers (norms and biases: wd_mult 0), which only its
    OptimizerParamScheduler applies (without it every group decayed, norms included). Again
    after a checkpoint load, which restores the groups as they were saved: their max_lr and
    min_lr (which the scheduler reads before its own), Adam's betas and eps and Muon's
    momentum are set from the flags first, so a resume with another --lr trains at it."""
    for group in (g for opt in torch_optimizers(optimizer) for g in opt.param_groups):
        group["max_lr"], group["min_lr"] = schedule.lr, schedule.min_lr
        if "betas" in group:
            group["betas"] = (args.adam_beta1, args.adam_beta2)
        if "eps" in group:
            group["eps"] = args.adam_eps
        if "momentum" in group:
            group["momentum"] = args.muon_momentum
    return schedule.scheduler(optimizer, args.weight_decay, updates_done)
