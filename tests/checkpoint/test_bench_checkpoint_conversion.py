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


def test_a_workdir_holding_other_files_is_refused_and_kept(tmp_path, capsys):
    """It removed the whole --workdir first: `--workdir .` deleted the folder it ran in."""
    (tmp_path / "mine.txt").write_text("keep")
    (tmp_path / "hf").mkdir()  # a previous run's output
    with pytest.raises(SystemExit) as stop:
        bench.main(["--workdir", str(tmp_path)])
    assert stop.value.code == 2 and "mine.txt" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "keep" and (tmp_path / "hf").is_dir()


def test_a_previous_runs_outputs_are_replaced(tmp_path, monkeypatch):
    for name in bench.OUTPUTS:
        (tmp_path / name).mkdir()
        (tmp_path / name / "old.safetensors").write_text("old")
    monkeypatch.setattr(bench, "write_random_hf", lambda *a: (_ for _ in ()).throw(
        RuntimeError("stop after the clearing")))
    with pytest.raises(RuntimeError, match="stop after the clearing"):
        bench.main(["--workdir", str(tmp_path)])
    assert not any((tmp_path / name).exists() for name in bench.OUTPUTS)
