"""examples/qwen3_30b_a3b/train.sh builds each variant's torchrun command from shell arrays:
every variant's command must parse and pass the trainer's checks at its 8-GPU layout. A fake
torchrun records the command; the GPU and SGLang are taken as present (this machine has
neither), everything else is the trainer's own validation."""
import importlib.util
import os
import subprocess

import pytest
import torch

from megatron_qarl.train import build_parser
from megatron_qarl.trainer.validation import validate

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "qwen3_30b_a3b",
                      "train.sh")
VARIANTS = ["w4a16-qarl-tbpo", "fp8-qarl-tbpo", "bf16-gspo", "w4a16-rollout-gspo", "bf16-grpo",
            "w4a16-rollout-grpo"]


def _command(tmp_path, variant, env=None, extra=()):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    torchrun = bin_dir / "torchrun"
    torchrun.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$ARGS_OUT"\n')
    torchrun.chmod(0o755)
    (tmp_path / "data.jsonl").write_text('{"prompt": "1+1=", "answer": "2"}\n')
    for folder in ("hf", "mg"):  # their files are read at work, past these checks
        (tmp_path / folder).mkdir(exist_ok=True)
    (tmp_path / "mg" / "metadata.json").write_text("{}")
    out = tmp_path / "argv"
    subprocess.run(["bash", SCRIPT, variant, "data.jsonl", "hf", "mg", *extra], cwd=tmp_path,
                   check=True, timeout=60,
                   env={**os.environ, **(env or {}), "ARGS_OUT": str(out),
                        "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    argv = out.read_text().splitlines()
    assert argv[:3] == ["--standalone", "--nproc-per-node", "8"], argv[:3]
    return argv[argv.index("megatron_qarl.train") + 1:]


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_30b_variant_passes_the_trainers_checks(variant, tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "sglang" else find_spec(name, *a))
    sglang = "rollout" not in variant  # the quantized-rollout baselines run embedded
    argv = _command(tmp_path, variant,
                    extra=["--sglang-urls", "http://127.0.0.1:30000"] if sglang else [])
    monkeypatch.chdir(tmp_path)
    args = validate(build_parser().parse_args(argv), world_size=8)
    assert args.rollout_engine == ("sglang" if sglang else "embedded")
    assert (args.data_parallel_size, args.optimizer) == (4, "muon")
    assert args.loss_agg_mode == ("seq-mean-token-mean" if "gspo" in variant else "token-mean")
    adam = validate(build_parser().parse_args(
        _command(tmp_path, variant, env={"OPTIMIZER": "adam", "ENGINE": "embedded"})), 8)
    assert adam.optimizer == "adam" and adam.use_distributed_optimizer
