"""`python -m qarl_kernels.bench`'s parts and doc sections, with each table builder replaced by
one that names itself (the builders need a GPU; tests/kernels checks the kernels on the CPU)."""
import pytest

import qarl_kernels.bench.__main__ as bench

BUILDERS = ["bench_w4a16_grouped", "bench_w4a16_grad_input", "bench_dense", "bench_quantize",
            "bench_fp8", "bench_fp8_swiglu", "bench_fp8_dispatch", "bench_int8", "bench_experts",
            "bench_training_swiglu", "bench_combine", "bench_sampler", "bench_w4a16_decode",
            "bench_swiglu"]


class _Table:
    def __init__(self, name):
        self.name = name

    def markdown(self):
        return f"### {self.name}\n"


def _run(monkeypatch, tmp_path, *flags):
    ran = []
    for name in BUILDERS:
        monkeypatch.setattr(bench, name, lambda *a, name=name, **k: ran.append(name)
                            or [_Table(name)])
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(bench, "ceilings", lambda: {"copy_GBps": 1.0, "bf16_TFLOPs": 1.0})
    monkeypatch.setattr(bench, "launch_floor", lambda: (1.0, 1.0))
    monkeypatch.setattr(bench, "run_header", lambda *a: "header\n")
    doc = tmp_path / "benchmarks.md"
    bench.main(["--doc", str(doc), *flags])
    return ran, doc.read_text()


def test_only_runs_its_parts_in_the_full_runs_order_into_a_section_of_its_own(
        monkeypatch, tmp_path):
    ran, _ = _run(monkeypatch, tmp_path)
    assert ran == BUILDERS[:-2]
    ran, text = _run(monkeypatch, tmp_path, "--only", "sampler", "--only", "fp8")
    assert ran == ["bench_fp8", "bench_fp8_swiglu", "bench_fp8_dispatch", "bench_sampler"]
    start = "<!-- qarl_kernels.bench --only sampler --only fp8: start -->"
    assert start in text and "<!-- qarl_kernels.bench: start -->" in text  # both kept
    assert text.index(start) < text.index("### bench_fp8\n", text.index(start))


def test_decode_only_runs_the_decode_tables_into_their_own_section(monkeypatch, tmp_path):
    ran, text = _run(monkeypatch, tmp_path, "--decode-only")
    assert ran == ["bench_w4a16_decode", "bench_swiglu", "bench_w4a16_decode"]
    assert "## W4A16 decode (`python -m qarl_kernels.bench --decode-only`)" in text


@pytest.mark.parametrize("flags,names", [
    (["--compare", "old.w4a16_gemm"], "--decode-only"),
    (["--decode-only", "--only", "fp8"], "--only"),
    (["--decode-only", "--sweep"], "--sweep"),
])
def test_flags_a_run_would_ignore_are_refused(monkeypatch, tmp_path, capsys, flags, names):
    with pytest.raises(SystemExit) as exit_:
        _run(monkeypatch, tmp_path, *flags)
    assert exit_.value.code == 2 and names in capsys.readouterr().err
    assert not (tmp_path / "benchmarks.md").exists()
