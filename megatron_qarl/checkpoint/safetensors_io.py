"""Reading and writing HF safetensors checkpoints one tensor at a time.

The reader checks every file header up front (names, shapes, dtypes, and that each file is
as long as its header says), so a broken download fails before any conversion work, with
the file and tensor named. The writer keeps at most one shard in memory.
"""
from __future__ import annotations

import json
import os
import struct
from typing import Dict, Iterable, List, Optional, Tuple

import torch
from safetensors import safe_open
from safetensors.torch import save_file

from .errors import CheckpointError

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
DEFAULT_SHARD_BYTES = 2 * 1024**3
#: safetensors header dtype names of the tensors these checkpoints hold
TORCH_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32,
                "I64": torch.int64, "I32": torch.int32, "I8": torch.int8,
                "F8_E4M3": torch.float8_e4m3fn}


def read_header(path: str) -> Dict[str, dict]:
    """{tensor: {"dtype", "shape", "data_offsets"}} of one .safetensors file, after checking
    that the file holds all the bytes its header promises."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path}: {size} bytes, too short for a safetensors file; "
                                  f"it is truncated: download or convert it again")
        (n,) = struct.unpack("<Q", head)
        if 8 + n > size:
            raise CheckpointError(f"{path}: header of {n} bytes but the file has {size}; it "
                                  f"is truncated: download or convert it again")
        try:
            header = json.loads(f.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise CheckpointError(f"{path}: unreadable safetensors header ({e}); the file is "
                                  f"corrupt: download or convert it again") from e
    header.pop("__metadata__", None)
    data_bytes = size - 8 - n
    for name, info in header.items():
        end = info["data_offsets"][1]
        if end > data_bytes:
            raise CheckpointError(
                f"{path}: tensor {name!r} ends at byte {end} of the data but the file has "
                f"only {data_bytes}; the file is truncated: download or convert it again"
            )
    return header


class SafetensorsCheckpoint:
    """The tensors of an HF checkpoint directory (one model.safetensors, or shards listed in
    model.safetensors.index.json), read lazily by name."""

    def __init__(self, directory: str):
        self.directory = directory
        index_path = os.path.join(directory, INDEX_FILE)
        if os.path.isfile(index_path):
            try:
                with open(index_path) as f:
                    weight_map = json.load(f)["weight_map"]
            except (json.JSONDecodeError, KeyError) as e:
                raise CheckpointError(f"{index_path}: not a safetensors index ({e}); copy it "
                                      f"again from the original checkpoint") from e
        elif os.path.isfile(os.path.join(directory, SINGLE_FILE)):
            weight_map = {n: SINGLE_FILE for n in read_header(os.path.join(directory,
                                                                           SINGLE_FILE))}
        else:
            raise CheckpointError(
                f"{directory}: neither {INDEX_FILE} nor {SINGLE_FILE} found; pass an HF "
                f"checkpoint directory"
            )
        self.file_of: Dict[str, str] = weight_map
        self._headers: Dict[str, Dict[str, dict]] = {}
        self._open: Dict[str, object] = {}  # filename -> safe_open handle (memory-mapped)
        for filename in sorted(set(weight_map.values())):
            path = self.path(filename)
            if not os.path.isfile(path):
                names = [n for n, f in weight_map.items() if f == filename]
                raise CheckpointError(f"{path}: missing; {INDEX_FILE} lists it for "
                                      f"{len(names)} tensors (first {names[0]!r})")
            self._headers[filename] = read_header(path)
        for name, filename in weight_map.items():
            if name not in self._headers[filename]:
                raise CheckpointError(
                    f"{self.path(filename)}: tensor {name!r} is listed in {INDEX_FILE} but "
                    f"not in the file; the shard is from another checkpoint"
                )

    def path(self, filename: str) -> str:
        return os.path.join(self.directory, filename)

    def names(self) -> List[str]:
        return list(self.file_of)

    def dtype_and_shape(self, name: str) -> Tuple[str, Tuple[int, ...]]:
        """The safetensors dtype name (e.g. "BF16") and shape, from the header."""
        info = self._headers[self.file_of[name]][name]
        return info["dtype"], tuple(info["shape"])

    def torch_dtype(self, name: str) -> torch.dtype:
        dtype, _ = self.dtype_and_shape(name)
        if dtype not in TORCH_DTYPES:
            raise CheckpointError(f"{self.path(self.file_of[name])}: tensor {name!r} has "
                                  f"dtype {dtype}, which these tools do not convert")
        return TORCH_DTYPES[dtype]

    def check(self, expected_shapes: Dict[str, Tuple[int, ...]], what: str,
              may_hold: Tuple[str, ...] = ()) -> None:
        """Every expected tensor present with its shape and no other but those ending in
        `may_hold` (a tensor nobody reads would be dropped from the conversion: the layers
        past a config's num_hidden_layers, biases); `what` names the model in errors."""
        missing = [n for n in expected_shapes if n not in self.file_of]
        if missing:
            raise CheckpointError(
                f"{self.directory}: {len(missing)} tensors of {what} missing, first "
                f"{missing[0]!r}; the checkpoint is incomplete or config.json belongs to "
                f"another model"
            )
        unread = [n for n in self.file_of
                  if n not in expected_shapes and not n.endswith(may_hold)]
        if unread:
            raise CheckpointError(
                f"{self.path(self.file_of[unread[0]])}: {len(unread)} tensors that {what} does "
                f"not have, first {unread[0]!r}; they would be dropped: check config.json "
                f"(num_hidden_layers, num_experts, attention_bias) against the checkpoint"
            )
        for name, shape in expected_shapes.items():
            _, actual = self.dtype_and_shape(name)
            if actual != tuple(shape):
                raise CheckpointError(
                    f"{self.path(self.file_of[name])}: tensor {name!r} has shape "
                    f"{list(actual)}, expected {list(shape)} from config.json; the config "
                    f"belongs to another model size"
                )

    def get(self, name: str) -> torch.Tensor:
        if name not in self.file_of:
            raise CheckpointError(f"{self.directory}: tensor {name!r} not found in the "
                                  f"checkpoint")
        filename = self.file_of[name]
        if filename not in self._open:
            self._open[filename] = safe_open(self.path(filename), framework="pt")
        return self._open[filename].get_tensor(name)

    def get_many(self, names: Iterable[str]) -> Dict[str, torch.Tensor]:
        return {n: self.get(n) for n in names}


class ShardedSafetensorsWriter:
    """Writes tensors into model-XXXXX-of-YYYYY.safetensors shards plus the index, holding at
    most `max_shard_bytes` in memory. Shards get their final names in `close()`."""

    def __init__(self, directory: str, max_shard_bytes: int = DEFAULT_SHARD_BYTES):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.max_shard_bytes = max_shard_bytes
        self._pending: Dict[str, torch.Tensor] = {}
        self._pending_bytes = 0
        self._shards: List[List[str]] = []
        self._names: set = set()
        self.total_bytes = 0

    def add(self, name: str, tensor: torch.Tensor) -> None:
        if name in self._names:
            raise ValueError(f"tensor {name!r} written twice")
        self._names.add(name)
        nbytes = tensor.numel() * tensor.element_size()
        if self._pending and self._pending_bytes + nbytes > self.max_shard_bytes:
            self._flush()
        self._pending[name] = tensor.contiguous()
        self._pending_bytes += nbytes
        self.total_bytes += nbytes

    def _tmp_name(self, i: int) -> str:
        return os.path.join(self.directory, f".shard-{i:05d}.safetensors.tmp")

    def _flush(self) -> None:
        if not self._pending:
            return
        save_file(self._pending, self._tmp_name(len(self._shards)), metadata={"format": "pt"})
        self._shards.append(list(self._pending))
        self._pending, self._pending_bytes = {}, 0

    def close(self, extra_metadata: Optional[dict] = None) -> str:
        """Finish the shards and write the index; returns the index path."""
        self._flush()
        n = len(self._shards)
        weight_map = {}
        for i, names in enumerate(self._shards):
            final = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
            os.replace(self._tmp_name(i), os.path.join(self.directory, final))
            weight_map.update({name: final for name in names})
        index = {"metadata": {"total_size": self.total_bytes, **(extra_metadata or {})},
                 "weight_map": weight_map}
        path = os.path.join(self.directory, INDEX_FILE)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(index, f, indent=2)
        os.replace(tmp, path)
        return path
