"""Fixtures of the SGLang bridge tests (the CPU install of SGLang's classes: sglang_cpu.py)."""
import pytest
from sglang_cpu import ensure_sglang_path


@pytest.fixture(scope="session")
def sglang_classes():
    """(MultiprocessingSerializer, FlattenedTensorBucket, FlattenedTensorMetadata)."""
    ensure_sglang_path()
    from sglang.srt.utils import MultiprocessingSerializer
    from sglang.srt.weight_sync.tensor_bucket import FlattenedTensorBucket, \
        FlattenedTensorMetadata
    return MultiprocessingSerializer, FlattenedTensorBucket, FlattenedTensorMetadata
