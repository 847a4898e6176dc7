"""Make SGLang 0.5.23's own weight-sync classes importable for these tests.

They are installed without SGLang's GPU dependencies into a private directory (see
install_sglang_cpu.sh; about 40 MB downloaded, 20 s) the first time, then reused. A failed
install fails the tests that need the classes: they are not skipped."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(__file__)
TARGET = os.environ.get("QARL_SGLANG_CPU_DIR",
                        os.path.expanduser("~/.cache/megatron-qarl/sglang-0.5.23-cpu"))


def _ensure_sglang_path() -> str:
    marker = os.path.join(TARGET, ".complete")
    if not os.path.exists(marker):
        subprocess.run(["bash", os.path.join(HERE, "install_sglang_cpu.sh"), TARGET],
                       check=True)
        open(marker, "w").close()
    if TARGET not in sys.path:
        sys.path.insert(0, TARGET)
    return TARGET


@pytest.fixture(scope="session")
def sglang_classes():
    """(MultiprocessingSerializer, FlattenedTensorBucket, FlattenedTensorMetadata)."""
    _ensure_sglang_path()
    from sglang.srt.utils import MultiprocessingSerializer
    from sglang.srt.weight_sync.tensor_bucket import FlattenedTensorBucket, \
        FlattenedTensorMetadata
    return MultiprocessingSerializer, FlattenedTensorBucket, FlattenedTensorMetadata
