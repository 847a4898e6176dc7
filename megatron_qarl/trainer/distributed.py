"""Process groups and Megatron's parallel state, under torchrun or as one plain process.

On a CPU the compat CPU support module patches the few torch.cuda entry points megatron-core
0.16.1 calls unconditionally (each patch says why); the GPU path patches nothing.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
from datetime import timedelta
from typing import Optional

import torch
import torch.distributed as dist
from megatron.core import parallel_state, tensor_parallel

from ..compat import apply_megatron_fixes


def world_size_from_env() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def collective_timeout_minutes(args) -> Optional[float]:
    """--distributed-timeout-minutes, or its default: 120 under the SGLang engine, whose
    rollout keeps every rank but 0 in one collective; otherwise None, torch's and Megatron's
    own (NCCL 10 minutes, gloo 30, Megatron's subgroups 30)."""
    if args.distributed_timeout_minutes is not None:
        return args.distributed_timeout_minutes
    return 120.0 if args.rollout_engine == "sglang" else None


def use_deterministic_algorithms() -> None:
    """--deterministic-mode, set up as Megatron-LM and slime do: the atomics the MoE layers'
    routed sums (layers/token_combine.py) left, such as attention's and the embedding's
    backward, take torch's deterministic paths. cuBLAS needs a fixed workspace configuration
    for it, read when its first handle is created.
    torch would also fill every new tensor with NaN, a check for reads of uninitialized memory
    that its docs let valid programs turn off: it was 4.9 of the 5.6 ms the flag added to a
    3-layer Qwen3-30B-A3B forward + backward (docs/training.md)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def init_distributed(args) -> torch.device:
    if args.deterministic_mode:
        use_deterministic_algorithms()
    if args.device == "cpu":
        from ..compat.cpu_testing import patch_megatron_for_cpu

        patch_megatron_for_cpu()
    apply_megatron_fixes()
    backend = "nccl" if args.device == "cuda" else "gloo"
    minutes = collective_timeout_minutes(args)
    group_options = {} if minutes is None else {"timeout": timedelta(minutes=minutes)}
    if args.device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        # the GPU bound as Megatron-LM binds it, so NCCL's barriers know their device (torch
        # warns at each checkpoint save otherwise)
        group_options["device_id"] = torch.device("cuda", torch.cuda.current_device())
        if args.quant_kernels == "auto" and importlib.util.find_spec("triton") is not None:
            from qarl_kernels.register import register_cuda_kernels

            register_cuda_kernels()
    if not dist.is_initialized():
        if "RANK" in os.environ:
            dist.init_process_group(backend, **group_options)
        else:
            # one process needs no rendezvous: an in-memory store (a free port picked, then
            # bound, was taken by another job in between: EADDRINUSE, session 70)
            dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1,
                                    **group_options)
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=args.tensor_model_parallel_size,
        pipeline_model_parallel_size=1,
        expert_model_parallel_size=args.expert_model_parallel_size,
        expert_tensor_parallel_size=args.expert_tensor_parallel_size,
        **({} if minutes is None else {"distributed_timeout_minutes": math.ceil(minutes)}),
    )
    tensor_parallel.model_parallel_cuda_manual_seed(args.seed)
    torch.manual_seed(args.seed)
    return torch.device("cuda", torch.cuda.current_device()) if args.device == "cuda" \
        else torch.device("cpu")


def shutdown_distributed() -> None:
    parallel_state.destroy_model_parallel()
    if dist.is_initialized():
        dist.destroy_process_group()


def dp_rank_and_size():
    return (parallel_state.get_data_parallel_rank(),
            parallel_state.get_data_parallel_world_size())


def is_extreme(key: str) -> bool:
    """Metrics named *_max / *_min are extremes: combined by max / min, not averaged (a mean
    of maxima is no maximum)."""
    return key.endswith(("_max", "_min"))


def merge_metric(key: str, total, value, parts: int):
    """One part's value into a running reduction over `parts` parts (a step's optimizer
    updates): the mean, or the extreme for is_extreme keys. total is None before the first."""
    if is_extreme(key):
        if total is None:
            return value
        pick = torch.maximum if key.endswith("_max") else torch.minimum
        return pick(torch.as_tensor(total), torch.as_tensor(value))
    share = value / parts
    return share if total is None else total + share


def all_reduce_metrics(values: dict, device) -> dict:
    """Scalar metrics over data-parallel ranks: the mean, or the max / min of is_extreme keys
    (two collectives for all keys: a sum, and a max over the extremes, mins negated)."""
    if not values:
        return {}
    keys = sorted(values)
    t = torch.tensor([float(values[k]) for k in keys], dtype=torch.float64, device=device)
    group = parallel_state.get_data_parallel_group()
    size = dist.get_world_size(group)
    sign = torch.tensor([-1.0 if k.endswith("_min") else 1.0 for k in keys],
                        dtype=torch.float64, device=device)
    extremes = t * sign
    dist.all_reduce(t, group=group)
    t /= size
    if any(is_extreme(k) for k in keys):
        dist.all_reduce(extremes, op=dist.ReduceOp.MAX, group=group)
        t = torch.where(torch.tensor([is_extreme(k) for k in keys], device=device),
                        extremes * sign, t)
    return dict(zip(keys, t.tolist()))


def data_parallel_sha1(items) -> str:
    """sha1 of repr(items) where one data-parallel rank holds them; over several, the sha1 of
    every rank's digest in rank order (each holds its share of the step's samples, and rank 0
    alone logs). Digests travel, not the items: a step's token ids would be megabytes."""
    digest = hashlib.sha1(repr(items).encode()).hexdigest()
    group = parallel_state.get_data_parallel_group()
    if dist.get_world_size(group) == 1:
        return digest
    digests = [None] * dist.get_world_size(group)
    dist.all_gather_object(digests, digest, group=group)
    return hashlib.sha1("".join(digests).encode()).hexdigest()


def from_rank_zero(value):
    """Rank 0's value on every rank: Megatron's checkpoint saves rank 0's common state and
    warns at each save where another rank's differs (the metrics mark only rank 0 has)."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def all_reduce_sum(value: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(value, group=parallel_state.get_data_parallel_group())
    return value
