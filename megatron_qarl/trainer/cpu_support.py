"""What the trainer needs beyond compat.cpu_testing to run Megatron's optimizer on a CPU.

megatron-core 0.16.1's FP32Optimizer, grad clipping and its local multi-tensor l2 norm create
small bookkeeping tensors with a hard-coded device='cuda' (loss-scale 1.0, the grad-norm
all-reduce buffer), and clipping asserts CUDA grads. The patch gives those three modules a
`torch` whose tensor factories send device 'cuda' to the CPU (every other attribute is the real
torch) and swaps the clipping function for the same scaling without the device assertion.
Used only with --device cpu (tiny runs, CI); the GPU path patches nothing."""
from __future__ import annotations

import torch

_FACTORIES = ("tensor", "zeros", "ones", "empty", "full")


class _CpuTorch:
    def __getattr__(self, name):
        attr = getattr(torch, name)
        if name not in _FACTORIES:
            return attr

        def on_cpu(*args, device=None, **kwargs):
            if device is not None and torch.device(device).type == "cuda":
                device = "cpu"
            return attr(*args, device=device, **kwargs)
        return on_cpu


@torch.no_grad()
def _clip_grad_by_total_norm_cpu(parameters, max_norm, total_norm, use_decoupled_grad=False):
    """clip_grads.clip_grad_by_total_norm_fp32 asserts grad.type() == 'torch.cuda.FloatTensor';
    this is the same scaling without the device assertion."""
    coeff = max_norm / (total_norm + 1.0e-6)
    if coeff >= 1.0:
        return
    for param in parameters:
        grad = param.decoupled_grad if use_decoupled_grad else param.grad
        if grad is not None:
            grad.mul_(coeff)


def patch_megatron_optimizer_for_cpu() -> None:
    from megatron.core import utils
    from megatron.core.optimizer import clip_grads, optimizer

    optimizer.torch = clip_grads.torch = utils.torch = _CpuTorch()
    optimizer.clip_grad_by_total_norm_fp32 = _clip_grad_by_total_norm_cpu
