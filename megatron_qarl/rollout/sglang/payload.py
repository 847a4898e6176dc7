"""Request bodies of the two weight-update calls, built with SGLang's own classes.

The server unpickles `update_weights_from_tensor` payloads with an allow-list that admits
only SGLang's FlattenedTensorBucket / FlattenedTensorMetadata and torch's rebuild functions,
keyed by module path, so the payload must be made of SGLang's real classes: they are
imported here, guarded, from the `sglang` extra (tested against 0.5.23's pure-Python modules).
"""
from __future__ import annotations

import torch

from ..publish.buckets import Bucket

LOAD_FORMAT = "flattened_bucket"


def _sglang_classes():
    try:
        from sglang.srt.utils import MultiprocessingSerializer
        from sglang.srt.weight_sync.tensor_bucket import (FlattenedTensorBucket,
                                                          FlattenedTensorMetadata)
    except ImportError as e:
        raise ImportError(
            "publishing weights to SGLang over CUDA IPC needs the sglang package on the "
            "trainer (pip install -e '.[sglang]', or the docker/Dockerfile image)") from e
    return MultiprocessingSerializer, FlattenedTensorBucket, FlattenedTensorMetadata


def sglang_bucket(bucket: Bucket):
    """The bucket as SGLang's FlattenedTensorBucket (same bytes, same offsets)."""
    _, FlattenedTensorBucket, FlattenedTensorMetadata = _sglang_classes()
    metadata = [FlattenedTensorMetadata(name=e.name, shape=torch.Size(e.shape), dtype=e.dtype,
                                        start_idx=e.start, end_idx=e.end, numel=e.nbytes)
                for e in bucket.entries]
    return FlattenedTensorBucket(flattened_tensor=bucket.flatten(), metadata=metadata)


def tensor_update_body(flat, tp_size: int) -> dict:
    """/update_weights_from_tensor of one `sglang_bucket` (made once for every engine): one
    base64 payload per engine TP rank (rank r loads entry r). Each is serialized separately,
    as SGLang's own Engine does, so each rank's CUDA-IPC references are released
    independently. The payloads share `flat`'s GPU buffer: the caller keeps `flat` alive
    until every engine's call has returned."""
    serializer, _, _ = _sglang_classes()
    obj = {"flattened_tensor": flat.get_flattened_tensor(), "metadata": flat.get_metadata()}
    return {"serialized_named_tensors": [serializer.serialize(obj, output_str=True)
                                         for _ in range(tp_size)],
            "load_format": LOAD_FORMAT, "flush_cache": False}


def dtype_name(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> 'bfloat16' (the server resolves it with getattr(torch, name))."""
    return str(dtype).replace("torch.", "")


def distributed_update_body(bucket: Bucket, group_name: str) -> dict:
    """/update_weights_from_distributed: the bucket's layout; the bytes follow by broadcast.
    The server allocates FlattenedTensorBucket.empty(names, dtypes, shapes), whose offsets
    are the running byte sums: equal to the bucket's by construction (publish/buckets.py)."""
    return {"names": [e.name for e in bucket.entries],
            "dtypes": [dtype_name(e.dtype) for e in bucket.entries],
            "shapes": [list(e.shape) for e in bucket.entries],
            "group_name": group_name, "flush_cache": False, "load_format": LOAD_FORMAT}
