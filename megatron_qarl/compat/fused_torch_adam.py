"""Torch's fused Adam(W) for Megatron's optimizer where Megatron falls back to torch's.

Without TransformerEngine or Apex, megatron.core.optimizer builds torch.optim.AdamW (or Adam)
with torch's default implementation, foreach: several passes over each param, its grad and
both moments a step. Torch's fused implementation makes the same update in one pass. Megatron
has no flag for it, so the inner optimizers are switched after construction and before their
first step (a fused optimizer keeps its step count on the params' device; checkpoints carry
the flag in their param groups, and torch moves a loaded step there).
"""
from __future__ import annotations

from typing import Iterator

import torch

#: device types whose params are switched: CPU runs keep foreach, whose numbers the CPU tests
#: and the tiny example's documented runs are
FUSED_DEVICE_TYPES = ("cuda",)


def torch_adams(optimizer) -> Iterator[torch.optim.Optimizer]:
    """The torch Adam/AdamW instances inside a Megatron optimizer (chained or not)."""
    for megatron_optimizer in getattr(optimizer, "chained_optimizers", [optimizer]):
        inner = getattr(megatron_optimizer, "optimizer", None)
        if isinstance(inner, (torch.optim.Adam, torch.optim.AdamW)):
            yield inner


def use_fused_torch_adam(optimizer) -> int:
    """Switch every torch Adam(W) of `optimizer` whose params all lie on a FUSED_DEVICE_TYPES
    device and which has not stepped yet to torch's fused implementation; returns how many."""
    switched = 0
    for adam in torch_adams(optimizer):
        params = [p for group in adam.param_groups for p in group["params"]]
        if adam.state or not params or any(p.device.type not in FUSED_DEVICE_TYPES
                                          or not p.is_floating_point() for p in params):
            continue
        for settings in (adam.defaults, *adam.param_groups):
            settings.update(foreach=False, fused=True)
        switched += 1
    return switched
