"""The stream of (HF name, serving tensor) a publish sends, produced on the sending rank.

Every rank must drain it: the gathers inside are collectives. Non-sending ranks get nothing
out of it."""
from __future__ import annotations

from typing import Iterable, Iterator, Tuple

import torch

from ...checkpoint.hf_config import Qwen3MoeDims
from .hf_tensors import to_hf_tensors
from .params import ShardedParam
from .reshard import ParallelGroups, gather_full


def hf_stream(params: Iterable[ShardedParam], groups: ParallelGroups,
              dims: Qwen3MoeDims) -> Iterator[Tuple[str, torch.Tensor]]:
    for param in params:
        full = gather_full(param, groups)
        for offset, value in full or ():
            yield from to_hf_tensors(param.name, value, dims, offset).items()
