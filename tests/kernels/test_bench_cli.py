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


def _run(monkeypatch, tmp_path, *flags, keep=()):
    """keep: builders the test replaced itself."""
    ran = []
    for name in set(BUILDERS) - set(keep):
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
    ran, text = _run(monkeypatch, tmp_path, "--only", "sampler", "--only", "fp8", "--only",
                     "sampler")
    assert ran == ["bench_fp8", "bench_fp8_swiglu", "bench_fp8_dispatch", "bench_sampler"]
    # named in the full run's order, once each: the same tables, one section
    start = "<!-- qarl_kernels.bench --only fp8 --only sampler: start -->"
    assert start in text and "<!-- qarl_kernels.bench: start -->" in text  # both kept
    assert text.index(start) < text.index("### bench_fp8\n", text.index(start))
    _, again = _run(monkeypatch, tmp_path, "--only", "fp8", "--only", "sampler")
    starts = [line for line in again.splitlines() if line.endswith(": start -->")]
    assert starts == ["<!-- qarl_kernels.bench: start -->", start]


def test_decode_only_runs_the_decode_tables_into_their_own_section(monkeypatch, tmp_path):
    ran, text = _run(monkeypatch, tmp_path, "--decode-only")
    assert ran == ["bench_w4a16_decode", "bench_swiglu", "bench_w4a16_decode"]
    assert "## W4A16 decode (`python -m qarl_kernels.bench --decode-only`)" in text


@pytest.mark.parametrize("flags,names", [
    (["--compare", "old.w4a16_gemm"], "--decode-only"),
    (["--decode-only", "--compare", "no_such_package.w4a16_gemm"], "no such module"),
    (["--decode-only", "--only", "fp8"], "--only"),
    (["--decode-only", "--sweep"], "--sweep"),
])
def test_flags_a_run_would_ignore_are_refused(monkeypatch, tmp_path, capsys, flags, names):
    with pytest.raises(SystemExit) as exit_:
        _run(monkeypatch, tmp_path, *flags)
    assert exit_.value.code == 2 and names in capsys.readouterr().err
    assert not (tmp_path / "benchmarks.md").exists()


def test_a_mismatch_fails_the_run_and_leaves_the_doc(monkeypatch, tmp_path, capsys):
    """A kernel that differs from its reference: the tables are printed, the run exits
    non-zero, and the doc keeps its figures (it wrote the wrong kernel's times before)."""
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nkept\n")

    def wrong(peak, check):
        check.equal("a wrong kernel", bench.torch.zeros(2), bench.torch.ones(2))
        return [_Table("wrong")]

    monkeypatch.setattr(bench, "bench_sampler", wrong)
    with pytest.raises(SystemExit) as exit_:
        _run(monkeypatch, tmp_path, "--only", "sampler", keep={"bench_sampler"})
    assert "differ from the reference" in str(exit_.value.code)
    assert "MISMATCH a wrong kernel" in capsys.readouterr().out
    assert doc.read_text() == "# Benchmarks\n\nkept\n"


def test_a_section_without_its_end_marker_is_refused_before_the_run(monkeypatch, tmp_path,
                                                                    capsys):
    """A run replaced everything from the start marker to the next end marker: another
    section's, or the file's prose."""
    doc = tmp_path / "benchmarks.md"
    text = ("<!-- qarl_kernels.bench --only sampler: start -->\nold\n\nprose\n"
            "<!-- qarl_kernels.bench --only fp8: start -->\nfp8\n"
            "<!-- qarl_kernels.bench --only fp8: end -->\n")
    doc.write_text(text)
    with pytest.raises(SystemExit) as exit_:
        _run(monkeypatch, tmp_path, "--only", "sampler")
    assert exit_.value.code == 2 and "end -->" in capsys.readouterr().err
    assert doc.read_text() == text
