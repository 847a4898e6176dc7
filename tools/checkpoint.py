#!/usr/bin/env python
"""Checkpoint tools for Qwen3-MoE: HF <-> Megatron conversion, quantized export for
SGLang/vLLM, inspect and compare. See docs/checkpoints.md.

  python tools/checkpoint.py hf-to-megatron HF_DIR MEGATRON_DIR [--tensor-model-parallel-size 2]
  python tools/checkpoint.py megatron-to-hf MEGATRON_DIR HF_DIR
  python tools/checkpoint.py export MEGATRON_DIR OUT_DIR --scheme w4a16 [--quantize-attention]
  python tools/checkpoint.py inspect DIR
  python tools/checkpoint.py compare DIR_A DIR_B [--atol 0]

A Megatron checkpoint may be given as a training --save folder: its latest checkpoint is read.
"""
from __future__ import annotations

import argparse
import math
import re
import sys

from megatron_qarl import checkpoint  # its converters load on first use: --help stays quick
from megatron_qarl.checkpoint.errors import CheckpointError
from megatron_qarl.checkpoint.paths import resolve
from megatron_qarl.quant import QuantizationError

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30}


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not m or m.group(2).upper() not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a size like 2GB or 500MiB")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("hf-to-megatron", help="HF safetensors -> Megatron distributed ckpt")
    c.add_argument("hf_dir")
    c.add_argument("out_dir")
    c.add_argument("--tensor-model-parallel-size", type=int, default=1,
                   help="check that this TP can load the model (the checkpoint loads at any)")
    c.add_argument("--expert-model-parallel-size", type=int, default=1,
                   help="check that this EP can load the model (the checkpoint loads at any)")

    c = sub.add_parser("megatron-to-hf", help="Megatron distributed ckpt -> HF safetensors")
    c.add_argument("megatron_dir")
    c.add_argument("out_dir")
    c.add_argument("--hf-config", help="directory with config.json (default: the "
                                       "checkpoint's hf_assets/)")
    c.add_argument("--max-shard-size", type=parse_size, default="2GiB")

    c = sub.add_parser("export", help="Megatron ckpt -> quantized HF ckpt for SGLang/vLLM")
    c.add_argument("megatron_dir")
    c.add_argument("out_dir")
    c.add_argument("--scheme", default="w4a16",
                   help="w4a16 (group 128), w4a16-g64, w4a16-g32 or fp8-block")
    c.add_argument("--quantize-attention", action=argparse.BooleanOptionalAction, default=None,
                   help="W4A16: also quantize q/k/v/o (SGLang cannot update these in place); "
                        "fp8-block always does")
    c.add_argument("--hf-config", help="directory with config.json")
    c.add_argument("--max-shard-size", type=parse_size, default="2GiB")

    c = sub.add_parser("inspect", help="format, tensors, dtypes and shapes of a checkpoint")
    c.add_argument("path")
    c.add_argument("--limit", type=int, default=0, help="print at most this many tensors")

    c = sub.add_parser("compare", help="per-tensor max abs difference of two checkpoints")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--atol", type=float, default=None,
                   help="exit with status 1 if any difference exceeds this")
    c.add_argument("--all", action="store_true", help="print every tensor, not only "
                                                      "those that differ")
    c.add_argument("--hf-config", help="directory with config.json, for a Megatron checkpoint "
                                       "without hf_assets/ (one written by training)")
    return p


def _checkpoint(path: str) -> str:
    """A training --save folder stands for its latest checkpoint; say which one is read."""
    resolved = resolve(path)
    if resolved != path:
        print(f"{path}: a training --save folder; reading {resolved}", file=sys.stderr)
    return resolved


def run(args) -> int:
    for name in ("megatron_dir", "path", "a", "b"):
        if hasattr(args, name):
            setattr(args, name, _checkpoint(getattr(args, name)))
    if args.command == "hf-to-megatron":
        r = checkpoint.hf_to_megatron(args.hf_dir, args.out_dir,
                                      args.tensor_model_parallel_size,
                                      args.expert_model_parallel_size)
    elif args.command == "megatron-to-hf":
        r = checkpoint.megatron_to_hf(args.megatron_dir, args.out_dir, args.hf_config,
                                      args.max_shard_size)
    elif args.command == "export":
        r = checkpoint.export_quantized(args.megatron_dir, args.out_dir, args.scheme,
                                        args.quantize_attention, args.hf_config,
                                        args.max_shard_size)
    elif args.command == "inspect":
        fmt, rows = checkpoint.inspect_rows(args.path)
        print(f"{args.path}: {fmt}, {len(rows)} tensors")
        for name, dtype, shape in rows[: args.limit or None]:
            print(f"  {name:<72} {dtype:<14} {list(shape)}")
        return 0
    else:
        worst, differing, count = 0.0, 0, 0
        for name, dtype_a, dtype_b, diff in checkpoint.compare(args.a, args.b, args.hf_config):
            count += 1
            differs = diff != 0.0  # NaN (a NaN in either) differs too
            differing += differs
            if not math.isnan(worst) and (math.isnan(diff) or diff > worst):
                worst = diff
            if args.all or differs:
                print(f"  {name:<72} {dtype_a:>8} {dtype_b:>8}  max|a-b| {diff:.6g}")
        print(f"{count} tensors, {differing} differ, largest max|a-b| {worst:.6g}")
        return 1 if args.atol is not None and not worst <= args.atol else 0
    print(f"{args.command}: {r.bytes / 1e9:.3f} GB in {r.seconds:.1f} s "
          f"({r.gb_per_s:.3f} GB/s) -> {args.out_dir}")
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (CheckpointError, QuantizationError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
