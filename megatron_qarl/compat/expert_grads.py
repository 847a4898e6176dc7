"""megatron-core 0.16.1 sends expert gradients to the expert-data-parallel reduction only under
expert parallelism: its layers set `allreduce = not (is_expert and EP > 1)`, and DDP reduces
every `allreduce` parameter over the data-parallel group.

With EP = 1 and an expert-TP size below TP (e.g. TP 2, expert-TP 1), each TP rank runs whole
experts on its own sequence-parallel slice of the tokens, so each holds only part of every
expert gradient. The data-parallel group does not span the TP ranks; the expert-data-parallel
group does. Left as built, the TP ranks' copies of the experts drift apart from the first
optimizer step, and so do the sampler (which decodes a token on one rank) and the learner
(which routes it on another).
"""
from __future__ import annotations

import torch
from megatron.core.transformer.moe.moe_layer import MoELayer


def reduce_expert_grads_over_expert_dp(model: torch.nn.Module) -> None:
    """Mark the routed experts' parameters for the expert-data-parallel reduction where
    Megatron leaves them on the data-parallel one; before DDP and the optimizer are built."""
    for module in model.modules():
        if not isinstance(module, MoELayer):
            continue
        cfg = module.config
        if cfg.expert_model_parallel_size > 1 or (
                cfg.expert_tensor_parallel_size == cfg.tensor_model_parallel_size):
            continue
        for param in module.experts.parameters():
            param.allreduce = False
