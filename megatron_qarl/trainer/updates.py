"""One optimizer step on a mini-batch: micro-batch forwards and backwards with the chosen
objective, Megatron's gradient finalisation (DP all-reduce, sequence-parallel norm grads),
the optimizer step (which invalidates the quantized-weight caches through its hook)."""
from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

import torch
from megatron.core import parallel_state
from megatron.core.distributed import finalize_model_grads
from megatron.core.transformer.moe.moe_utils import MoEAuxLossAutoScaler

from .batches import ResponseBatch, micro_batch_rows, select
from .distributed import all_reduce_sum


def optimizer_step(model, optimizer, batch: ResponseBatch, rows: List[int], *,
                   scheduler, micro_batch_size: int, max_tokens: int,
                   loss_fn: Callable[[ResponseBatch, torch.Tensor], tuple],
                   normalizer: Callable[[torch.Tensor], torch.Tensor],
                   loss_name: str) -> Tuple[Dict[str, float], Dict[str, torch.Tensor]]:
    """loss_fn(micro_batch, global_normalizer) -> (loss, token_values): token_values are
    detached [rows, response] tensors (the new logprobs, the entropy). normalizer(mask) is
    this rank's count, summed over data-parallel ranks here so every rank divides by the same.

    Returns `loss_name`: the mini-batch's loss (each micro-batch's loss is its share of it, so
    the shares are summed over micro-batches and ranks), grad_norm and the update's lr (from
    `scheduler`, Megatron's, stepped after the update); and the token values
    over the mini-batch `select(batch, rows)`, for diagnostics over whole batches: means of
    micro-batch means would weigh a sequence by its micro-batch's size (micro-batches are
    bucketed by length)."""
    dp = parallel_state.get_data_parallel_world_size()
    model.zero_grad_buffer()
    optimizer.zero_grad()
    sub = select(batch, rows)
    total = all_reduce_sum(normalizer(sub.mask).to(sub.mask.device).float().clone())
    lengths = sub.lengths.tolist()
    values: Dict[str, torch.Tensor] = {}
    loss_sum = torch.zeros((), dtype=torch.float64, device=total.device)
    micro = micro_batch_rows(lengths, micro_batch_size, max_tokens,
                             parallel_state.get_data_parallel_group())
    # the routers' load-balancing loss is a mean per micro-batch: weight each by 1 / count,
    # as Megatron's schedules do, so its gradient does not grow with the micro-batch count
    MoEAuxLossAutoScaler.set_loss_scale(torch.ones((), device=total.device) / len(micro))
    for part in micro:
        loss, token_values = loss_fn(select(sub, part), total)
        # DDP averages gradients over DP ranks; each rank's loss is its share of the global
        # mean, so scale back by DP (see rl/objectives/aggregation.py).
        (loss * dp).backward()
        # kept on the device: a host read here would wait for this backward before the next
        # micro-batch's forward could be queued
        loss_sum += loss.detach().double()
        for key, value in token_values.items():
            if key not in values:
                values[key] = torch.zeros(sub.mask.shape, dtype=value.dtype, device=value.device)
            values[key][part, :value.shape[1]] = value.detach()
    loss_total = all_reduce_sum(loss_sum)
    finalize_model_grads([model])
    lr = scheduler.get_lr({})  # the schedule's, which every default param group has
    ok, grad_norm, _ = optimizer.step()
    if not ok:
        raise FloatingPointError("the optimizer skipped its step (non-finite gradients); lower "
                                 "--lr or check the data")
    scheduler.step(1)
    out = {loss_name: loss_total.item(),
           "grad_norm": float(grad_norm) if grad_norm is not None else float("nan"), "lr": lr}
    _check_finite(out[loss_name], None if grad_norm is None else out["grad_norm"], loss_name)
    return out, values


def _check_finite(loss: float, grad_norm: Optional[float], loss_name: str) -> None:
    """Without a loss scaler (fp32, bf16) Megatron's optimizer steps on NaN/inf gradients and
    reports success: the weights are then NaN, so the run stops before anything saves them
    (the last checkpoint stays good). grad_norm is None where --clip-grad 0 computes none."""
    if math.isfinite(loss) and (grad_norm is None or math.isfinite(grad_norm)):
        return
    raise FloatingPointError(
        f"non-finite step ({loss_name} {loss}, grad norm {grad_norm}): its update reached the "
        f"weights in memory, so the run stops before saving them; resume from the last "
        f"checkpoint (--load) with a lower --lr, or check the data and the reward")
