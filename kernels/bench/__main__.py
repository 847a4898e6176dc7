"""`python -m qarl_kernels.bench`: check every kernel against the reference on the GPU, time it
against torch bf16 in the same run, print the tables and write docs/benchmarks.md.

Shapes are Qwen3-30B-A3B's expert GEMMs (E=128 gate+up N=1536 K=2048, down N=2048 K=768),
EP8 (16 local experts) and TP2 (N halved), uniform top-8 routing of M tokens; the decode tables
also time EP8 beside TP attention (EP8_TP_ATTENTION).
"""
import argparse
import importlib.util
import sys

import torch

from .combine import bench_combine
from .dense import bench_dense
from .experts import bench_experts
from .fp8 import bench_fp8, bench_fp8_dispatch, bench_fp8_swiglu
from .int8 import bench_int8
from .measure import ceilings, launch_floor
from .quantize import bench_quantize
from .report import Checker, check_section, run_header, write_section
from .sampler import bench_sampler
from .training import bench_training_swiglu
from .w4a16 import bench_w4a16_grad_input, bench_w4a16_grouped
from .w4a16_decode import DECODE_SKEW, bench_swiglu, bench_w4a16_decode


#: each --only part's tables, in the order a full run writes them
PARTS = {
    "w4a16": lambda peak, check, args: (bench_w4a16_grouped(peak, check)
                                        + bench_w4a16_grad_input(peak, check)),
    "dense": lambda peak, check, args: bench_dense(peak, check),
    "quantize": lambda peak, check, args: bench_quantize(peak, check, args.sweep),
    "fp8": lambda peak, check, args: (bench_fp8(peak, check) + bench_fp8_swiglu(peak, check)
                                      + bench_fp8_dispatch(peak, check)),
    "int8": lambda peak, check, args: bench_int8(peak, check),
    "experts": lambda peak, check, args: bench_experts(peak, check),
    "training": lambda peak, check, args: bench_training_swiglu(peak, check),
    "combine": lambda peak, check, args: bench_combine(peak, check),
    "sampler": lambda peak, check, args: bench_sampler(peak, check),
}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m qarl_kernels.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--doc", default="docs/benchmarks.md", help="markdown file to update")
    p.add_argument("--sweep", action="store_true",
                   help="also time quantize block sizes (GEMM tiles: python -m qarl_kernels.tune)")
    p.add_argument("--only", choices=list(PARTS), action="append")
    p.add_argument("--decode-only", action="store_true",
                   help="only the W4A16 decode tables (M=1..256: the GEMMs, fc1 + SwiGLU "
                        "fused, the GEMMs under skewed routing), into their own doc section")
    p.add_argument("--compare", action="append", default=[], metavar="MODULE",
                   help="with --decode-only: also time MODULE.w4a16_grouped_matmul (an older "
                        "version of the kernel, importable)")
    args = p.parse_args(argv)
    if args.compare and not args.decode_only:
        p.error("--compare times older kernels in the decode tables only: add --decode-only")
    if args.decode_only and (args.only or args.sweep):
        p.error("--decode-only runs the W4A16 decode tables alone: drop --only / --sweep, or "
                "run them without --decode-only")
    for name in args.compare:
        if _missing(name):
            p.error(f"--compare {name}: no such module on the path (a copy of an older "
                    f"w4a16_gemm.py, importable by that name)")
    # one section a set of parts, whatever the flags' order or repeats
    args.only = [part for part in PARTS if part in args.only] if args.only else None
    section = _section(args)
    try:
        check_section(args.doc, section[0])
    except ValueError as err:
        p.error(f"--doc {err}")
    if not torch.cuda.is_available():
        raise SystemExit("qarl_kernels.bench needs a CUDA GPU; CPU checks are tests/kernels")
    torch.manual_seed(0)
    check = Checker()
    peak = ceilings()
    floor_us = launch_floor()
    if args.decode_only:
        tables = (bench_w4a16_decode(peak, check, args.compare) + bench_swiglu(peak, check)
                  + bench_w4a16_decode(peak, check, args.compare, DECODE_SKEW))
    else:
        tables = [table for part, run in PARTS.items() if part in (args.only or PARTS)
                  for table in run(peak, check, args)]
    command = "python -m qarl_kernels.bench" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    body = run_header(peak, floor_us, command) + "\n" + "\n".join(t.markdown() for t in tables)
    body += f"\nChecked against the reference before timing: {len(check.checked)} cases passed"
    body += "".join(f"\n- MISMATCH {f}" for f in check.failed) + "\n"
    print(body)
    if check.failed:
        raise SystemExit(f"{len(check.failed)} case(s) differ from the reference (MISMATCH "
                         f"above): {args.doc} is left as it was")
    write_section(args.doc, body, *section)


def _section(args) -> tuple:
    """(key, title) of the doc section a run writes: a partial run's is its own, keeping the
    full run's tables."""
    if args.decode_only:
        return "qarl_kernels.bench --decode-only", "W4A16 decode"
    if args.only:
        return ("qarl_kernels.bench " + " ".join(f"--only {part}" for part in args.only),
                "Kernels: " + ", ".join(args.only))
    return "qarl_kernels.bench", "Kernels"


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # its package is missing
        return True


if __name__ == "__main__":
    main()
