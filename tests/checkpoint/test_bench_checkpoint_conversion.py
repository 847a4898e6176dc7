"""tools/bench_checkpoint_conversion.py runs each step in a process of its own: a step that fails
must stop the benchmark with its error (it waited on the step's queue forever)."""
import os
import sys

import pytest

# tools/ holds scripts: importable by name, as the step's spawned process imports it again
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import bench_checkpoint_conversion as bench  # noqa: E402


def test_a_failing_step_raises_its_error(tmp_path):
    with pytest.raises(RuntimeError, match="hf-to-megatron failed: CheckpointError: .*no such "
                                           "folder"):
        bench.run_step("hf-to-megatron", str(tmp_path / "missing"), str(tmp_path / "out"))
