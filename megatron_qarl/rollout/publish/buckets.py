"""Flattened buckets: many named tensors of mixed dtypes as one uint8 buffer plus metadata,
so a publish is a few large transfers instead of thousands of small ones.

Within a bucket tensors are laid out by decreasing element size, so every byte offset is a
multiple of its tensor's element size with no padding: the layout equals the one SGLang's
FlattenedTensorBucket builds from the same list and the one FlattenedTensorBucket.empty
allocates on the receiving side of a broadcast (which rejects unaligned offsets). A bucket
closes when adding a tensor would exceed the byte budget; a tensor larger than the budget
travels alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, List, Tuple

import torch

BUCKET_FLAG = "--rollout-update-bucket-mb"


@dataclass(frozen=True)
class BucketEntry:
    name: str
    shape: Tuple[int, ...]
    dtype: torch.dtype
    start: int  # byte offset in the flattened buffer
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start


@dataclass
class Bucket:
    entries: List[BucketEntry]
    tensors: List[torch.Tensor]  # in entry order, kept alive until the transfer returns

    @property
    def nbytes(self) -> int:
        return self.entries[-1].end if self.entries else 0

    def flatten(self) -> torch.Tensor:
        """The uint8 buffer: every tensor's bytes at its entry's offset."""
        return torch.cat([t.reshape(-1).view(torch.uint8) for t in self.tensors])


def _layout(named: List[Tuple[str, torch.Tensor]]) -> Bucket:
    named = sorted(named, key=lambda nt: -nt[1].element_size())  # stable: keeps name order
    entries, offset = [], 0
    for name, t in named:
        size = t.numel() * t.element_size()
        entries.append(BucketEntry(name, tuple(t.shape), t.dtype, offset, offset + size))
        offset += size
    return Bucket(entries, [t.contiguous() for _, t in named])


def plan_buckets(named_tensors: Iterable[Tuple[str, torch.Tensor]],
                 bucket_bytes: int) -> Iterator[Bucket]:
    """Group a stream of named tensors into buckets of at most `bucket_bytes` (streaming: a
    bucket is yielded as soon as it is full, so only one is held at a time)."""
    if bucket_bytes <= 0:
        raise ValueError(f"{BUCKET_FLAG} must be > 0, got {bucket_bytes} bytes")
    pending, size = [], 0
    for name, t in named_tensors:
        nbytes = t.numel() * t.element_size()
        if pending and size + nbytes > bucket_bytes:
            yield _layout(pending)
            pending, size = [], 0
        pending.append((name, t))
        size += nbytes
    if pending:
        yield _layout(pending)
