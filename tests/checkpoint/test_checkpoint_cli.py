"""tools/checkpoint.py end to end: convert, export, inspect, compare, and the error exit."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

# tools/ holds scripts, not a package: load the script as the user runs it
_SPEC = importlib.util.spec_from_file_location(
    "checkpoint_cli", os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                                   "checkpoint.py"))
cli = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(cli)


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


def test_a_training_save_folder_stands_for_its_latest_checkpoint(megatron_dir, tmp_path, capsys):
    save = tmp_path / "save"
    shutil.copytree(megatron_dir, save / "iter_0000003")
    (save / "iter_0000005.tmp").mkdir()  # being written: not a checkpoint
    (save / "latest_checkpointed_iteration.txt").write_text("3")
    assert cli.main(["compare", str(save), megatron_dir, "--atol", "0"]) == 0
    captured = capsys.readouterr()
    assert f"reading {save / 'iter_0000003'}" in captured.err
    assert "45 tensors, 0 differ" in captured.out


def test_errors_exit_2_with_the_message(tmp_path, capsys):
    assert cli.main(["inspect", str(tmp_path)]) == 2
    assert "config.json: not found" in capsys.readouterr().err


def test_bad_size_is_refused_by_the_parser():
    with pytest.raises(SystemExit):
        cli.main(["megatron-to-hf", "a", "b", "--max-shard-size", "lots"])


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
