"""Writing a Megatron-Core distributed checkpoint (torch_dist) chunk by chunk.

Megatron's own save wants every tensor in memory. Here each chunk is a Megatron
`CheckpointableShardedTensor` over a meta tensor (shape and dtype only) whose data is
produced by a callback when torch.distributed.checkpoint's writer asks for it, so the writer
holds one chunk at a time. Everything else is Megatron's and torch's own code: the planner
(`MCoreSavePlanner`), the ShardedObject encoding, metadata.json and common.pt.
"""
from __future__ import annotations

import os
from typing import Callable, Dict, List, Sequence

import torch
import torch.distributed.checkpoint as dcp
from megatron.core.dist_checkpointing import ShardedObject, ShardedTensor
from megatron.core.dist_checkpointing.core import CheckpointingConfig, save_config
from megatron.core.dist_checkpointing.strategies.checkpointable import (
    CheckpointableShardedTensor, LocalShardsContainer,
)
from megatron.core.dist_checkpointing.strategies.common import TorchCommonSaveStrategy
from megatron.core.dist_checkpointing.strategies.torch import (
    MCoreSavePlanner, mcore_to_pyt_state_dict,
)

from .errors import CheckpointError
from .megatron_layout import Chunk, ExtraState
from .process_group import single_process_group


class LazyShard(CheckpointableShardedTensor):
    """A chunk whose data is made only when the DCP writer resolves it."""

    def __new__(cls, sh_ten: ShardedTensor, make: Callable[[], torch.Tensor]):
        return super().__new__(cls, sh_ten.data, sh_ten)

    def __init__(self, sh_ten: ShardedTensor, make: Callable[[], torch.Tensor]):
        super().__init__(sh_ten.data, sh_ten)
        self._make = make

    def __get_tensor_shard__(self, index) -> torch.Tensor:
        data = self._make()
        expected = tuple(self._sh_ten.local_shape)
        if tuple(data.shape) != expected or data.dtype != self._sh_ten.dtype:
            raise CheckpointError(
                f"{self._sh_ten.key} at {self._sh_ten.global_offset}: produced "
                f"{data.dtype} {list(data.shape)}, planned {self._sh_ten.dtype} {list(expected)}"
            )
        return data


def _sharded_tensor(chunk: Chunk, dtype: torch.dtype) -> ShardedTensor:
    """Megatron's description of the chunk (meta data: shape and dtype, no storage)."""
    meta = torch.empty(chunk.shape, dtype=dtype, device="meta")
    return ShardedTensor.from_rank_offsets(chunk.key, meta, *chunk.rank_offsets(), replica_id=0)


def save_lazily(directory: str, chunks: Sequence[Chunk], dtypes: Sequence[torch.dtype],
                makers: Sequence[Callable[[], torch.Tensor]],
                extra_states: Sequence[ExtraState]) -> None:
    """Write a torch_dist checkpoint to `directory`: chunk i is produced by makers[i]() when
    written. Chunks sharing a key must tile its global shape."""
    os.makedirs(directory, exist_ok=True)
    by_key: Dict[str, List[LazyShard]] = {}
    for chunk, dtype, make in zip(chunks, dtypes, makers):
        by_key.setdefault(chunk.key, []).append(LazyShard(_sharded_tensor(chunk, dtype), make))
    with single_process_group():
        state = {key: LocalShardsContainer(shards) for key, shards in by_key.items()}
        objects = [ShardedObject(e.key, None, e.global_shape, e.offset, replica_id=0)
                   for e in extra_states]
        state.update(mcore_to_pyt_state_dict({o.unique_key: [o] for o in objects}))
        dcp.save(state, storage_writer=dcp.FileSystemWriter(directory, thread_count=1),
                 planner=MCoreSavePlanner(can_run_decentralized_global_plan=False))
        TorchCommonSaveStrategy("torch", 1).save_common({}, directory)
        save_config(CheckpointingConfig("torch_dist", 1, "torch", 1), directory)
