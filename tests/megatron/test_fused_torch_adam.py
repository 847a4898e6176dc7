"""Where Megatron falls back to torch's Adam (no TE or Apex), the trainer's optimizer takes
torch's fused implementation for GPU params: switched before the first step, Adam only, the
same training as foreach."""
import pytest
import torch
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer

from megatron_qarl.layers.hooks import torch_optimizers
from megatron_qarl.trainer import optimizer as trainer_optimizer
from megatron_qarl.trainer.muon import MegatronMuon, get_muon_optimizer
from megatron_qarl.trainer.optimizer import use_fused_torch_adam, wrap_ddp

from tiny_qwen3 import build_tiny, train_losses

CONFIG = OptimizerConfig(optimizer="adam", lr=3e-3, weight_decay=0.01, clip_grad=1.0,
                         params_dtype=torch.float32)


def _model():
    torch.manual_seed(0)
    module = build_tiny("none")
    return wrap_ddp(module, module.config, use_distributed_optimizer=False)


def _adams(optimizer):
    return [o for o in torch_optimizers(optimizer) if isinstance(o, torch.optim.AdamW)]


def _fused(optimizer):
    return [bool(group.get("fused")) and not group.get("foreach")
            for adam in _adams(optimizer) for group in adam.param_groups]


def test_cpu_params_keep_foreach(single_process):
    optimizer = get_megatron_optimizer(CONFIG, [_model()])
    assert list(_adams(optimizer)) and use_fused_torch_adam(optimizer) == 0
    assert not any(_fused(optimizer))


def test_switched_before_the_first_step_and_trains_as_foreach(single_process, monkeypatch):
    """CPU params stand in for GPU ones (torch fuses Adam on both)."""
    monkeypatch.setattr(trainer_optimizer, "FUSED_ADAM_DEVICE_TYPES", ("cpu",))
    losses = {}
    for fused in (False, True):
        optimizer = get_megatron_optimizer(CONFIG, [model := _model()])
        if fused:
            assert use_fused_torch_adam(optimizer) == len(_adams(optimizer)) > 0
            assert all(_fused(optimizer))
        losses[fused] = train_losses(model, optimizer, 4)
        assert use_fused_torch_adam(optimizer) == 0  # stepped: its state is left as it is
    assert losses[True][-1] < 0.9 * losses[True][0]
    assert losses[True] == pytest.approx(losses[False], rel=1e-5)


def test_muons_optimizer_is_left_alone(single_process, monkeypatch):
    monkeypatch.setattr(trainer_optimizer, "FUSED_ADAM_DEVICE_TYPES", ("cpu",))
    optimizer = get_muon_optimizer(CONFIG, [_model()])
    inner = [o.optimizer for o in optimizer.chained_optimizers]
    assert use_fused_torch_adam(optimizer) == len(inner) - 1 > 0
    assert all(_fused(optimizer))
    assert not any(group.get("fused") for o in inner if isinstance(o, MegatronMuon)
                   for group in o.param_groups)
