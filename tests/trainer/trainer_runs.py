"""Run the trainer as a user does (a subprocess of `python -m megatron_qarl.train`) on a
tiny CPU configuration, and read back what it wrote."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

TINY = [
    "--device", "cpu", "--no-progress-bar", "--synthetic-num-prompts", "64",
    "--rollout-batch-size", "4", "--n-samples-per-prompt", "4", "--global-batch-size", "8",
    "--micro-batch-size", "4", "--rollout-max-new-tokens", "4", "--seq-length", "16",
    "--sft-iters", "3", "--sft-batch-size", "16", "--eval-num-prompts", "8", "--lr", "1e-3",
    "--rollout-quant", "w4a16", "--loss", "tbpo",
]


# The device of a 2-process run: gloo processes on the CPU everywhere, and NCCL on 2 GPUs with
# the bf16 parameters the GPU runs use (on the GPU machine).
TWO_GPUS = pytest.mark.skipif(torch.cuda.device_count() < 2,
                              reason="needs 2 GPUs (the GPU machine)")
NCCL_BF16 = ["--device", "cuda", "--bf16"]
TWO_PROCESSES = [pytest.param([], id="gloo"),
                 pytest.param(NCCL_BF16, id="nccl-bf16", marks=TWO_GPUS)]


def train(*flags: str, check: bool = True, nproc: int = 1, pythonpath: str = "",
          env: dict | None = None) -> subprocess.CompletedProcess:
    """nproc > 1: under torchrun, one process a GPU with `--device cuda`, else gloo processes
    on this machine. pythonpath: a folder put first on the trainer's PYTHONPATH. env: added to
    the trainer's environment."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore", **(env or {})}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pythonpath, env.get("PYTHONPATH")]))
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", str(nproc)] if nproc > 1 else [sys.executable]
    proc = subprocess.run([*launcher, "-m", "megatron_qarl.train", *TINY, *flags],
                          capture_output=True, text=True, env=env, timeout=240)
    if check and proc.returncode != 0:
        raise AssertionError(f"train failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def records(path: str, event: str = "train") -> list:
    with open(path) as f:
        return [r for r in map(json.loads, f) if r["event"] == event]


def checkpoint_tensors(folder: str, tmp_path) -> dict:
    """A Megatron torch_dist checkpoint read back with torch's own DCP converter."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    os.makedirs(tmp_path, exist_ok=True)
    out = str(tmp_path / (os.path.basename(folder) + ".pt"))
    dcp_to_torch_save(folder, out)
    return {k: v for k, v in torch.load(out, weights_only=False).items()
            if isinstance(v, torch.Tensor)}
