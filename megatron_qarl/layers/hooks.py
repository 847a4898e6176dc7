"""Model-level cache control: find the quantized modules, invalidate their caches, and the
optimizer post-step hook that keeps the caches in step with the master weights."""
from __future__ import annotations

from typing import Iterator, List, Tuple, Union

import torch

from ..quant import NoQuant
from .weight_cache import invalidate_together

Model = Union[torch.nn.Module, List[torch.nn.Module]]


def model_chunks(model: Model) -> List[torch.nn.Module]:
    """Megatron passes models as a list of chunks (virtual pipeline); accept either."""
    return list(model) if isinstance(model, (list, tuple)) else [model]


def quantized_modules(model: Model) -> Iterator[Tuple[str, torch.nn.Module]]:
    """(name, module) of every module holding quantized-weight caches. Names drop the
    wrappers' `module.` prefixes (DDP, Float16Module), giving GPTModel-relative names."""
    for chunk in model_chunks(model):
        for name, module in chunk.named_modules():
            if hasattr(module, "quant_caches"):
                while name.startswith("module."):
                    name = name[len("module."):]
                yield name, module


def low_bit_modules(model: Model) -> Iterator[Tuple[str, torch.nn.Module]]:
    """quantized_modules whose caches hold low-bit weights: publishing and export read those
    instead of the masters. Scheme 'none' grouped experts (--moe-grouped-gemm) are left out:
    their cache is a bf16 copy of the masters, which publish as they are."""
    for name, module in quantized_modules(model):
        if not any(isinstance(c.scheme, NoQuant) for c in module.quant_caches().values()):
            yield name, module


def invalidate_quantized_weights(model: Model) -> None:
    """Each cache's next read re-quantizes all of them (`weight_cache.quantize_together`)."""
    invalidate_together([c for _name, m in quantized_modules(model)
                         for c in m.quant_caches().values()])


def torch_optimizers(optimizer) -> List[torch.optim.Optimizer]:
    """The torch optimizers inside a Megatron optimizer (chained, mixed precision or FP32)."""
    if isinstance(optimizer, torch.optim.Optimizer):
        return [optimizer]
    if hasattr(optimizer, "chained_optimizers"):
        return [t for o in optimizer.chained_optimizers for t in torch_optimizers(o)]
    if hasattr(optimizer, "optimizer"):
        return torch_optimizers(optimizer.optimizer)
    raise TypeError(
        f"cannot find a torch optimizer inside {type(optimizer).__name__}; pass a "
        f"torch.optim.Optimizer or a Megatron optimizer"
    )


def install_quant_refresh_hook(optimizer, model: Model) -> list:
    """After every optimizer step, invalidate the model's quantized weights; the next forward
    (or publish) re-quantizes the updated masters once. Returns the hook handles.

    A Megatron mixed-precision optimizer copies its fp32 main params into the model params
    after the inner torch step: the hook fires before that copy, which is fine because it only
    marks the caches dirty and quantization happens at the next read. That read re-quantizes
    every layer at once, so the distributed optimizer's parameter all-gather must be complete
    by then: overlapped with the forward (overlap_param_gather) it would not be, for later
    layers, and the stale masters would be quantized unseen; refused."""
    for chunk in model_chunks(model):
        ddp_config = getattr(chunk, "ddp_config", None)
        if ddp_config is not None and getattr(ddp_config, "overlap_param_gather", False):
            raise ValueError("overlap_param_gather: the quantized weights are re-quantized "
                             "together at the first forward read, before later layers' "
                             "parameters would be gathered; wrap the model with "
                             "overlap_param_gather=False")
    return [opt.register_step_post_hook(lambda *_: invalidate_quantized_weights(model))
            for opt in torch_optimizers(optimizer)]
