"""tools/checkpoint.py end to end: convert, export, inspect, compare, and the error exit."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from megatron_qarl.checkpoint.convert import ConversionReport
from megatron_qarl.quant import QuantizationError

from tool_scripts import load_tool

cli = load_tool("checkpoint")


def test_convert_export_inspect_compare(hf_dir, tmp_path, capsys):
    mg, back, w4 = (str(tmp_path / n) for n in ("mg", "back", "w4"))
    assert cli.main(["hf-to-megatron", hf_dir, mg, "--tensor-model-parallel-size", "2",
                     "--expert-model-parallel-size", "2"]) == 0
    assert cli.main(["megatron-to-hf", mg, back, "--max-shard-size", "500KB"]) == 0
    assert cli.main(["export", mg, w4, "--scheme", "w4a16-g32"]) == 0
    capsys.readouterr()

    assert cli.main(["compare", hf_dir, back, "--atol", "0"]) == 0
    assert "45 tensors, 0 differ" in capsys.readouterr().out
    assert cli.main(["compare", hf_dir, mg, "--atol", "0"]) == 0
    # W4A16 differs from bf16 on the 24 expert linears only, by at most half a step
    assert cli.main(["compare", hf_dir, w4, "--atol", "0"]) == 1
    out = capsys.readouterr().out
    assert "45 tensors, 24 differ" in out
    assert cli.main(["compare", hf_dir, w4, "--atol", "0.05"]) == 0
    capsys.readouterr()
    # without --atol compare reports and exits 0; it lists the differing tensors, --all every one
    for flags, listed in (([], 24), (["--all"], 45)):
        assert cli.main(["compare", hf_dir, w4, *flags]) == 0
        out = capsys.readouterr().out
        assert "45 tensors, 24 differ" in out
        assert sum(line.startswith("  ") for line in out.splitlines()) == listed

    assert cli.main(["inspect", w4]) == 0
    out = capsys.readouterr().out
    assert "quantized (compressed-tensors: w4a16-g32)" in out
    assert "model.layers.0.mlp.experts.0.down_proj.weight_scale" in out and "[128, 4]" in out
    # a quantized layout these tools did not write (a GPTQ download) is listed, not refused
    config = os.path.join(w4, "config.json")
    with open(config) as f:
        fields = json.load(f)
    fields["quantization_config"] = {"quant_method": "gptq", "bits": 4}
    with open(config, "w") as f:
        json.dump(fields, f)
    assert cli.main(["inspect", w4]) == 0
    out = capsys.readouterr().out
    assert "quantized (gptq: a layout these tools did not write" in out
    assert "down_proj.weight_scale" in out
    assert cli.main(["inspect", mg]) == 0
    out = capsys.readouterr().out
    assert "Megatron-Core distributed checkpoint" in out
    assert "decoder.layers.mlp.experts.experts.linear_fc1.weight" in out
    assert "[2, 4, 256, 128]" in out
    assert cli.main(["inspect", mg, "--limit", "2"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.endswith("(torch_dist, any TP/EP), 12 tensors") and len(rows) == 2


@pytest.mark.parametrize("argv, printed", [
    (["compare", "SAVE", "MG", "--atol", "0"], "45 tensors, 0 differ"),
    (["compare", "MG", "SAVE", "--atol", "0"], "45 tensors, 0 differ"),
    (["inspect", "SAVE"], "Megatron-Core distributed checkpoint"),
    (["megatron-to-hf", "SAVE", "OUT"], "megatron-to-hf: "),
    (["export", "SAVE", "OUT"], "export: "),
])
def test_a_training_save_folder_stands_for_its_latest_checkpoint(megatron_dir, tmp_path, capsys,
                                                                 argv, printed):
    """Every subcommand that reads a Megatron checkpoint takes the trainer's --save folder."""
    save = tmp_path / "save"
    shutil.copytree(megatron_dir, save / "iter_0000003")
    (save / "iter_0000005.tmp").mkdir()  # being written: not a checkpoint
    (save / "latest_checkpointed_iteration.txt").write_text("3")
    paths = {"SAVE": str(save), "MG": megatron_dir, "OUT": str(tmp_path / "out")}
    assert cli.main([paths.get(a, a) for a in argv]) == 0
    captured = capsys.readouterr()
    assert f"reading {save / 'iter_0000003'}" in captured.err
    assert printed in captured.out


def test_errors_exit_2_with_the_message(tmp_path, capsys):
    assert cli.main(["inspect", str(tmp_path)]) == 2
    assert "config.json: not found" in capsys.readouterr().err


@pytest.mark.parametrize("text, size", [
    ("500KB", 500_000), ("1.5MB", 1_500_000), ("2GB", 2 * 10**9), ("3KiB", 3 * 2**10),
    ("64 mib", 64 * 2**20), ("2GiB", 2 * 2**30), ("100", 100), ("7b", 7),
])
def test_a_size_takes_decimal_and_binary_units(text, size):
    """KB/MB/GB are powers of 10 and KiB/MiB/GiB of 2, in either case, with a fraction."""
    assert cli.parse_size(text) == size


@pytest.mark.parametrize("size", ["lots", "2TB", "1,5GB", "1e9", "GB"])
def test_bad_size_is_refused_by_the_parser(size, capsys):
    with pytest.raises(SystemExit):
        cli.main(["megatron-to-hf", "a", "b", "--max-shard-size", size])
    assert "expected a size like 2GB or 500MiB" in capsys.readouterr().err


@pytest.fixture
def converter_calls(monkeypatch):
    """The converters replaced by recorders that report 3 GB in 2 s."""
    calls = []

    def recorder(name):
        def convert(*args):
            calls.append((name, args))
            return ConversionReport(3 * 10**9, 2.0)
        return convert

    for name in ("hf_to_megatron", "megatron_to_hf", "export_quantized"):
        monkeypatch.setattr(cli.checkpoint, name, recorder(name))
    return calls


GIB2 = 2 * 2**30  # the default --max-shard-size


@pytest.mark.parametrize("argv, call", [
    (["hf-to-megatron", "H", "O"], ("hf_to_megatron", ("H", "O", 1, 1))),
    (["hf-to-megatron", "H", "O", "--tensor-model-parallel-size", "2",
      "--expert-model-parallel-size", "4"], ("hf_to_megatron", ("H", "O", 2, 4))),
    (["megatron-to-hf", "M", "O"], ("megatron_to_hf", ("M", "O", None, GIB2))),
    (["megatron-to-hf", "M", "O", "--hf-config", "C", "--max-shard-size", "500KB"],
     ("megatron_to_hf", ("M", "O", "C", 500_000))),
    (["export", "M", "O"], ("export_quantized", ("M", "O", "w4a16", None, None, GIB2))),
    (["export", "M", "O", "--quantize-attention"],
     ("export_quantized", ("M", "O", "w4a16", True, None, GIB2))),
    (["export", "M", "O", "--scheme", "w4a16-g64", "--no-quantize-attention", "--hf-config", "C",
      "--max-shard-size", "1MiB"],
     ("export_quantized", ("M", "O", "w4a16-g64", False, "C", 2**20))),
])
def test_each_subcommand_passes_its_flags_to_its_converter(converter_calls, capsys, argv, call):
    """A flag the CLI parses but does not pass on is silently ignored (the conversion runs with
    the default); the summary line's rate is the bytes over the seconds."""
    assert cli.main(argv) == 0
    assert converter_calls == [call]
    assert capsys.readouterr().out == f"{argv[0]}: 3.000 GB in 2.0 s (1.500 GB/s) -> O\n"


def test_a_quantizer_refusal_is_one_line_and_exit_2(monkeypatch, capsys):
    """The export's quantizer refuses a layout with a QuantizationError, not a CheckpointError."""
    def refuse(*_args):
        raise QuantizationError("fc2: 96 input columns are not a multiple of the group 128")

    monkeypatch.setattr(cli.checkpoint, "export_quantized", refuse)
    assert cli.main(["export", "M", "O"]) == 2
    assert capsys.readouterr().err == "error: fc2: 96 input columns are not a multiple of the " \
                                      "group 128\n"


def test_help_prints_no_megatron_import_warnings():
    """megatron-core warns at import that TE and Apex are missing; a user asking for --help
    should see the usage, not those lines."""
    script = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "checkpoint.py")
    run = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and "hf-to-megatron" in run.stdout
    assert "Transformer Engine" not in run.stderr and "Apex" not in run.stderr, run.stderr


def test_an_output_folder_that_holds_files_is_refused_and_left_as_it_was(hf_dir, megatron_dir,
                                                                         tmp_path, capsys):
    """An export into a copy of the HF model would replace its config.json and index and
    leave its bf16 shards unreferenced: every converter refuses a folder with files in it."""
    out = tmp_path / "hf_copy"
    shutil.copytree(hf_dir, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for argv in (["export", megatron_dir, str(out)], ["megatron-to-hf", megatron_dir, str(out)],
                 ["hf-to-megatron", hf_dir, str(out)]):
        assert cli.main(argv) == 2
        assert "the output folder exists and is not empty" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    a_file = out / "config.json"
    assert cli.main(["export", megatron_dir, str(a_file)]) == 2
    assert "config.json: a file, not a folder" in capsys.readouterr().err
    assert a_file.read_bytes() == before["config.json"]


@pytest.mark.parametrize("make_argv, message", [
    (lambda hf, tmp: ["export", str(tmp / "missing"), str(tmp / "out")],
     r"missing: no such folder"),
    (lambda hf, tmp: ["hf-to-megatron", str(tmp / "missing"), str(tmp / "out")],
     r"missing: no such folder"),
    (lambda hf, tmp: ["export", hf, str(tmp / "out")],
     r"not a Megatron distributed checkpoint .*an HF checkpoint .*hf-to-megatron"),
    (lambda hf, tmp: ["inspect", os.path.join(hf, "config.json")],
     r"a file, not a checkpoint folder"),
])
def test_a_path_that_is_not_the_checkpoint_asked_for_says_what_it_is(hf_dir, tmp_path, capsys,
                                                                      make_argv, message):
    assert cli.main(make_argv(hf_dir, tmp_path)) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists()


def test_compare_takes_the_hf_config_of_a_training_checkpoint(hf_dir, megatron_dir, tmp_path,
                                                              capsys):
    """A training save has no hf_assets/: compare names --hf-config, and takes it."""
    save = tmp_path / "iter_0000001"
    shutil.copytree(megatron_dir, save, ignore=shutil.ignore_patterns("hf_assets"))
    assert cli.main(["compare", str(save), hf_dir]) == 2
    assert "--hf-config" in capsys.readouterr().err
    assert cli.main(["compare", str(save), hf_dir, "--hf-config", hf_dir, "--atol", "0"]) == 0
    assert "45 tensors, 0 differ" in capsys.readouterr().out


def test_compare_counts_a_nan_as_a_difference(hf_dir, tmp_path, capsys):
    """max |a - b| with a NaN in it is NaN, which `> 0` and max() read as no difference: the
    damaged copy compared equal, exit 0."""
    from safetensors.torch import load_file, save_file

    copy = tmp_path / "nan"
    shutil.copytree(hf_dir, copy)
    name = "model.layers.1.mlp.experts.2.up_proj.weight"
    with open(copy / "model.safetensors.index.json") as f:
        shard = str(copy / json.load(f)["weight_map"][name])
    tensors = load_file(shard)
    tensors[name][0, 0] = float("nan")
    save_file(tensors, shard, metadata={"format": "pt"})
    assert cli.main(["compare", hf_dir, str(copy), "--atol", "0"]) == 1
    out = capsys.readouterr().out
    assert "45 tensors, 1 differ, largest max|a-b| nan" in out and name in out


def test_a_damaged_shard_is_one_line_not_a_traceback(megatron_dir, tmp_path, capsys):
    """torch DCP's own CheckpointException (a BaseException) escaped the CLI's handler."""
    copy = tmp_path / "meg"
    shutil.copytree(megatron_dir, copy)
    shard = sorted(copy.glob("*.distcp"))[0]
    shard.write_bytes(shard.read_bytes()[:64])
    assert cli.main(["megatron-to-hf", str(copy), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "its shards cannot be read" in err and str(copy) in err
