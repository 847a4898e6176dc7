"""`python -m qarl_kernels.bench`: check every kernel against the reference on the GPU, time it
against torch bf16 in the same run, print the tables and write docs/benchmarks.md.

Shapes are Qwen3-30B-A3B's expert GEMMs (E=128 gate+up N=1536 K=2048, down N=2048 K=768),
EP8 (16 local experts) and TP2 (N halved), uniform top-8 routing of M tokens; the decode tables
also time EP8 beside TP attention (EP8_TP_ATTENTION).
"""
import argparse

import torch

from .combine import bench_combine
from .dense import bench_dense
from .experts import bench_experts
from .fp8 import bench_fp8, bench_fp8_dispatch, bench_fp8_swiglu
from .int8 import bench_int8
from .measure import ceilings, launch_floor
from .quantize import bench_quantize
from .report import Checker, run_header, write_section
from .sampler import bench_sampler
from .training import bench_training_swiglu
from .w4a16 import bench_w4a16_grad_input, bench_w4a16_grouped
from .w4a16_decode import DECODE_SKEW, bench_swiglu, bench_w4a16_decode


PARTS = ["w4a16", "dense", "quantize", "fp8", "int8", "experts", "training", "combine",
         "sampler"]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m qarl_kernels.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--doc", default="docs/benchmarks.md", help="markdown file to update")
    p.add_argument("--sweep", action="store_true",
                   help="also time quantize block sizes (GEMM tiles: python -m qarl_kernels.tune)")
    p.add_argument("--only", choices=PARTS, action="append")
    p.add_argument("--decode-only", action="store_true",
                   help="only the W4A16 decode tables (M=1..256: the GEMMs, fc1 + SwiGLU "
                        "fused, the GEMMs under skewed routing), into their own doc section")
    p.add_argument("--compare", action="append", default=[], metavar="MODULE",
                   help="with --decode-only: also time MODULE.w4a16_grouped_matmul (an older "
                        "version of the kernel, importable)")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("qarl_kernels.bench needs a CUDA GPU; CPU checks are tests/kernels")
    torch.manual_seed(0)
    check = Checker()
    peak = ceilings()
    floor_us = launch_floor()
    parts = [] if args.decode_only else args.only or PARTS
    tables = (bench_w4a16_decode(peak, check, args.compare) + bench_swiglu(check)
              + bench_w4a16_decode(peak, check, args.compare, DECODE_SKEW)
              if args.decode_only else [])
    if "w4a16" in parts:
        tables += bench_w4a16_grouped(peak, check) + bench_w4a16_grad_input(check)
    if "dense" in parts:
        tables += bench_dense(peak, check)
    if "quantize" in parts:
        tables += bench_quantize(peak, check, args.sweep)
    if "fp8" in parts:
        tables += bench_fp8(peak, check) + bench_fp8_swiglu(check) + bench_fp8_dispatch(check)
    if "int8" in parts:
        tables += bench_int8(peak, check)
    if "experts" in parts:
        tables += bench_experts(peak, check)
    if "training" in parts:
        tables += bench_training_swiglu(peak, check)
    if "combine" in parts:
        tables += bench_combine(peak, check)
    if "sampler" in parts:
        tables += bench_sampler(peak, check)
    command = "python -m qarl_kernels.bench" + "".join(
        f" {a}" for a in (argv if argv is not None else __import__("sys").argv[1:]))
    body = run_header(peak, floor_us, command) + "\n" + "\n".join(t.markdown() for t in tables)
    body += f"\nChecked against the reference before timing: {len(check.checked)} cases passed"
    body += "".join(f"\n- MISMATCH {f}" for f in check.failed) + "\n"
    print(body)
    if args.decode_only:
        write_section(args.doc, body, "qarl_kernels.bench --decode-only", "W4A16 decode")
    elif args.only:  # a section of its own: a partial run keeps the full run's tables
        write_section(args.doc, body, "qarl_kernels.bench " + " ".join(
            f"--only {part}" for part in args.only), "Kernels: " + ", ".join(args.only))
    else:
        write_section(args.doc, body)


if __name__ == "__main__":
    main()
