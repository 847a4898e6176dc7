#!/usr/bin/env python
"""Checkpoint conversion throughput on full-size Qwen3-30B-A3B layers of random bf16 weights,
and the projected time for the whole model (48 layers + embeddings, 61.1 GB in bf16).

Each step runs in its own process so its peak memory is its own. GB/s are of the bf16 input.
  python tools/bench_checkpoint_conversion.py --workdir /tmp/qarl-bench [--layers 1]

The vocabulary is cut to --vocab (default 1024) so the measured bytes are the decoder
layer's; the projection divides the full model's bytes by the measured rate.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import shutil
import threading
import time
from queue import Empty

import torch
from tqdm import tqdm

from megatron_qarl.checkpoint import export_quantized, hf_to_megatron, megatron_to_hf
from megatron_qarl.checkpoint.hf_config import dims_from_config
from megatron_qarl.checkpoint.hf_names import hf_names
from megatron_qarl.checkpoint.megatron_layout import all_chunks
from megatron_qarl.checkpoint.model_preset import hf_config_from_preset
from megatron_qarl.checkpoint.safetensors_io import ShardedSafetensorsWriter
from megatron_qarl.models import QWEN3_30B_A3B


def write_random_hf(directory: str, layers: int, vocab: int) -> int:
    """A Qwen3-30B-A3B-shaped HF checkpoint with `layers` layers; returns its bytes."""
    config = hf_config_from_preset(QWEN3_30B_A3B.replace(num_layers=layers, vocab_size=vocab))
    dims = dims_from_config(config)
    writer = ShardedSafetensorsWriter(directory)
    generator = torch.Generator().manual_seed(0)
    for name in tqdm(hf_names(layers, dims.num_experts), desc="random HF weights"):
        shape = dims.hf_shape(name)
        writer.add(name, (torch.randn(shape, generator=generator) * 0.02).to(torch.bfloat16))
    writer.close()
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return writer.total_bytes


class AnonPeak:
    """Peak anonymous resident memory (/proc RssAnon), sampled: the process's own data,
    unlike ru_maxrss, which also counts the memory-mapped safetensors pages it has read."""

    def __init__(self, interval: float = 0.05):
        self.peak_kib, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)
        self._thread.start()

    def _run(self, interval: float) -> None:
        while not self._stop.is_set():
            with open("/proc/self/status") as f:
                kib = next(int(line.split()[1]) for line in f if line.startswith("RssAnon"))
            self.peak_kib = max(self.peak_kib, kib)
            time.sleep(interval)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_kib / 2**20


def _step(name: str, args: tuple, queue) -> None:
    torch.set_num_threads(os.cpu_count())
    fn = {"hf-to-megatron": hf_to_megatron, "megatron-to-hf": megatron_to_hf,
          "export": export_quantized}[name.split(":")[0]]
    anon = AnonPeak()
    try:
        report = fn(*args)
    except BaseException as err:  # noqa: BLE001 - the parent raises it with the step's name
        queue.put(f"{type(err).__name__}: {err}")
        raise
    queue.put((report.bytes, report.seconds, anon.stop(),
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20))


def run_step(name: str, *args) -> tuple:
    """The step in a process of its own (its peak memory alone); its error, or its end without
    a result (the OOM killer), raised here rather than waited on."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_step, args=(name, args, queue))
    proc.start()
    while True:
        ended = not proc.is_alive()  # before the wait: what it sent is in the pipe by then
        try:
            result = queue.get(timeout=1.0)
            break
        except Empty:
            if ended:
                raise RuntimeError(f"{name}: the step's process ended (exit code "
                                   f"{proc.exitcode}) without a result") from None
    proc.join()
    if isinstance(result, str):
        raise RuntimeError(f"{name} failed: {result}")
    return result


#: the folders a run writes under --workdir, removed again by the next run
OUTPUTS = ("hf", "megatron", "hf_back", "w4a16", "fp8")


def _clear_workdir(p, workdir: str) -> None:
    """Removes a previous run's outputs; anything else in the folder is the user's."""
    if os.path.exists(workdir) and not os.path.isdir(workdir):
        p.error(f"--workdir {workdir} is a file: name a new or empty folder")
    foreign = sorted(set(os.listdir(workdir)) - set(OUTPUTS)) if os.path.isdir(workdir) else []
    if foreign:
        p.error(f"--workdir {workdir} holds {', '.join(foreign[:5])}, which this benchmark "
                f"did not write (it writes {', '.join(OUTPUTS)} and removes them on the next "
                f"run): name a new or empty folder")
    for name in OUTPUTS:
        shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", required=True,
                   help=f"a new or empty folder (a previous run's {', '.join(OUTPUTS)} are "
                        f"replaced)")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--vocab", type=int, default=1024)
    args = p.parse_args(argv)
    _clear_workdir(p, args.workdir)
    hf, mg, back = (os.path.join(args.workdir, n) for n in OUTPUTS[:3])
    size = write_random_hf(hf, args.layers, args.vocab)
    full = 2 * sum(c.numel for c in all_chunks(dims_from_config(
        hf_config_from_preset(QWEN3_30B_A3B))))  # bf16 bytes
    print(f"input: {args.layers} layer(s), {size / 1e9:.3f} GB bf16; full model "
          f"{full / 1e9:.1f} GB; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, torch {torch.__version__}")
    steps = [("hf-to-megatron", hf, mg), ("megatron-to-hf", mg, back),
             ("export:w4a16", mg, os.path.join(args.workdir, OUTPUTS[3]), "w4a16"),
             ("export:fp8-block", mg, os.path.join(args.workdir, OUTPUTS[4]), "fp8-block")]
    for name, *step_args in steps:
        nbytes, seconds, anon_gib, rss_gib = run_step(name, *step_args)
        rate = size / 1e9 / seconds
        print(f"{name:<17} {seconds:7.2f} s {rate:6.3f} GB/s  peak anon {anon_gib:5.2f} GiB "
              f"(RSS {rss_gib:5.2f})  out {nbytes / 1e9:.3f} GB  whole model "
              f"{full / 1e9 / rate / 60:5.1f} min  (load avg {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
