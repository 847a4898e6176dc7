"""Megatron's dist_checkpointing asks torch.distributed for the rank even in one process:
the conversion tools run as a world of one gloo process unless a group already exists."""
from __future__ import annotations

import contextlib

import torch.distributed as dist

from .errors import CheckpointError


@contextlib.contextmanager
def single_process_group():
    """Use the existing default process group, or create a world-size-1 gloo one for the
    duration (an in-memory store: nothing listens on a port)."""
    if dist.is_initialized():
        if dist.get_world_size() != 1:
            raise CheckpointError(
                f"checkpoint conversion runs in one process, but this one is rank "
                f"{dist.get_rank()} of {dist.get_world_size()}: run tools/checkpoint.py "
                f"without torchrun"
            )
        yield
        return
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()
