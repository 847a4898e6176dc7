"""tools/bench_checkpoint_conversion.py runs each step in a process of its own: a step that fails
must stop the benchmark with its error (it waited on the step's queue forever)."""
import os
import queue
import sys
import time

import pytest
import torch

# tools/ holds scripts: importable by name, as the step's spawned process imports it again
sys.path.append(os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import bench_checkpoint_conversion as bench  # noqa: E402


def test_a_failing_step_raises_its_error(tmp_path):
    with pytest.raises(RuntimeError, match="hf-to-megatron failed: CheckpointError: .*no such "
                                           "folder"):
        bench.run_step("hf-to-megatron", str(tmp_path / "missing"), str(tmp_path / "out"))


@pytest.mark.parametrize("workdir, named", [(".", "mine.txt"), ("mine.txt", "is a file")])
def test_a_workdir_holding_other_files_is_refused_and_kept(tmp_path, capsys, workdir, named):
    """It removed the whole --workdir first: `--workdir .` deleted the folder it ran in."""
    (tmp_path / "mine.txt").write_text("keep")
    (tmp_path / "hf").mkdir()  # a previous run's output
    with pytest.raises(SystemExit) as stop:
        bench.main(["--workdir", str(tmp_path / workdir)])
    assert stop.value.code == 2 and named in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "keep" and (tmp_path / "hf").is_dir()


def test_each_step_reads_the_last_ones_output_and_its_rate_is_of_the_bf16_input(tmp_path,
                                                                              monkeypatch, capsys):
    """The figures of a run of 2 GB whose steps each take 4 s and write 1 GB: 0.5 GB/s of the
    input, and the whole model (61.1 GB of bf16) at that rate in 2.0 min."""
    steps = []

    def run_step(name, *args):
        steps.append((name, *(os.path.relpath(a, tmp_path) if os.sep in a else a for a in args)))
        return 10**9, 4.0, 1.5, 2.5  # bytes written, seconds, peak anon and RSS GiB

    monkeypatch.setattr(bench, "write_random_hf", lambda *args: 2 * 10**9)
    monkeypatch.setattr(bench, "run_step", run_step)
    bench.main(["--workdir", str(tmp_path)])
    assert steps == [("hf-to-megatron", "hf", "megatron"),
                     ("megatron-to-hf", "megatron", "hf_back"),
                     ("export:w4a16", "megatron", "w4a16", "w4a16"),
                     ("export:fp8-block", "megatron", "fp8", "fp8-block")]
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("input: 1 layer(s), 2.000 GB bf16; full model 61.1 GB;")
    for line, (name, *_) in zip(out[1:], steps, strict=True):
        assert line.startswith(f"{name:<17}    4.00 s  0.500 GB/s  peak anon  1.50 GiB (RSS  2.50)"
                               f"  out 1.000 GB  whole model   2.0 min"), line


def test_a_step_sends_its_bytes_seconds_and_peaks_in_gib(megatron_dir, tmp_path, monkeypatch):
    """The step an export:<scheme> name stands for, run here rather than in a process of its
    own; ru_maxrss is in KiB, and the RSS is in GiB as the anonymous peak is."""
    monkeypatch.setattr(torch, "set_num_threads", lambda n: None)  # this process's stays
    sent = queue.Queue()
    bench._step("export:fp8-block", (megatron_dir, str(tmp_path / "fp8"), "fp8-block"), sent)
    nbytes, seconds, anon_gib, rss_gib = sent.get_nowait()
    shards = sum(f.stat().st_size for f in (tmp_path / "fp8").glob("*.safetensors"))
    assert 0.9 * shards < nbytes <= shards and seconds > 0
    assert 0.01 < anon_gib < rss_gib < 64
    assert "fp8" in (tmp_path / "fp8" / "config.json").read_text()


def test_the_anonymous_memory_peak_outlives_a_release():
    """The sampler keeps the largest RssAnon it saw, not the last."""
    with open("/proc/self/status") as f:
        before = next(int(line.split()[1]) for line in f if line.startswith("RssAnon")) / 2**20
    peak = bench.AnonPeak(interval=0.01)
    block = torch.ones(256 * 2**20, dtype=torch.uint8)  # 256 MiB, touched
    time.sleep(0.2)
    del block
    time.sleep(0.2)
    assert peak.stop() > before + 0.2


def test_a_previous_runs_outputs_are_replaced(tmp_path, monkeypatch):
    for name in bench.OUTPUTS:
        (tmp_path / name).mkdir()
        (tmp_path / name / "old.safetensors").write_text("old")
    monkeypatch.setattr(bench, "write_random_hf", lambda *a: (_ for _ in ()).throw(
        RuntimeError("stop after the clearing")))
    with pytest.raises(RuntimeError, match="stop after the clearing"):
        bench.main(["--workdir", str(tmp_path)])
    assert not any((tmp_path / name).exists() for name in bench.OUTPUTS)
