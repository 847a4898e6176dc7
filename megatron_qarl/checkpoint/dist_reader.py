"""Reading slices of a Megatron-Core distributed checkpoint through Megatron's own loader,
one decoder layer at a time, so no process holds the whole model."""
from __future__ import annotations

import os
import pickle
from typing import Dict, List, Sequence, Tuple

import torch
from megatron.core import dist_checkpointing
from megatron.core.dist_checkpointing import ShardedTensor
from megatron.core.dist_checkpointing.core import CheckpointingException
from torch.distributed.checkpoint import FileSystemReader
from torch.distributed.checkpoint.api import CheckpointException as DCPCheckpointException

from .errors import CheckpointError, first_failure
from .megatron_layout import Chunk
from .paths import METADATA, is_megatron, require_folder
from .process_group import single_process_group


def checkpoint_tensors(directory: str) -> Dict[str, Tuple[torch.dtype, Tuple[int, ...]]]:
    """{key: (dtype, global shape)} of every tensor in a torch_dist checkpoint (reads only
    the .metadata file)."""
    require_folder(directory)
    if not is_megatron(directory):
        hint = ("it holds an HF checkpoint (config.json): convert it with "
                "`tools/checkpoint.py hf-to-megatron` first"
                if os.path.isfile(os.path.join(directory, "config.json")) else
                "pass a folder written by the trainer's --save (or one iter_NNNNNNN in it) or "
                "by `tools/checkpoint.py hf-to-megatron`")
        raise CheckpointError(f"{directory}: not a Megatron distributed checkpoint (no "
                              f"{METADATA}); {hint}")
    try:
        meta = FileSystemReader(directory).read_metadata()
    except (OSError, EOFError, RuntimeError, ValueError, pickle.UnpicklingError) as e:
        raise CheckpointError(f"{directory}/.metadata: unreadable ({e}); the checkpoint was "
                              f"not completely written: convert or save it again") from e
    return {k: (v.properties.dtype, tuple(v.size)) for k, v in meta.state_dict_metadata.items()
            if hasattr(v, "properties")}


def load_chunks(directory: str, chunks: Sequence[Chunk],
                dtypes: Dict[str, torch.dtype]) -> List[torch.Tensor]:
    """The data of each chunk, in order (shape chunk.tensor_shape); `dtypes` by key."""
    request = {}
    for i, c in enumerate(chunks):
        data = torch.empty(c.shape, dtype=dtypes[c.key])
        request[str(i)] = ShardedTensor.from_rank_offsets(c.key, data, *c.rank_offsets(),
                                                          replica_id=0)
    with single_process_group():
        try:
            loaded = dist_checkpointing.load(request, directory,
                                             validate_access_integrity=False)
        except CheckpointingException as e:
            raise CheckpointError(
                f"{directory}: Megatron could not load {sorted({c.key for c in chunks})[:3]}: "
                f"{e}; the checkpoint belongs to a model with another config.json"
            ) from e
        except DCPCheckpointException as e:  # torch's, a BaseException: unreadable shards
            raise CheckpointError(
                f"{directory}: its shards cannot be read ({first_failure(e)}); the "
                f"checkpoint is corrupt or incomplete: convert or save it again") from None
    return [loaded[str(i)].reshape(c.tensor_shape) for i, c in enumerate(chunks)]
