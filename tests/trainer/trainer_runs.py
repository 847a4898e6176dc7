"""Run the trainer as a user does (a subprocess of `python -m megatron_qarl.train`) on a
tiny CPU configuration, and read back what it wrote."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

TINY = [
    "--device", "cpu", "--no-progress-bar", "--synthetic-num-prompts", "64",
    "--rollout-batch-size", "4", "--n-samples-per-prompt", "4", "--global-batch-size", "8",
    "--micro-batch-size", "4", "--rollout-max-new-tokens", "4", "--seq-length", "16",
    "--sft-iters", "3", "--sft-batch-size", "16", "--eval-num-prompts", "8", "--lr", "1e-3",
    "--rollout-quant", "w4a16", "--loss", "tbpo",
]


def train(*flags: str, check: bool = True, nproc: int = 1,
          pythonpath: str = "") -> subprocess.CompletedProcess:
    """nproc > 1: under torchrun, gloo processes on this machine. pythonpath: a folder put
    first on the trainer's PYTHONPATH."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
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
