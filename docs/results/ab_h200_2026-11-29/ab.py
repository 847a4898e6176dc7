"""Session 45: A/B timings in balanced order (A B B A, repeated: each kernel as often first as
last), medians, every cell also checked for equal bits.

  w4a16  a WS W4A16 kernel before (ws_before.py: `git show
         C:kernels/w4a16_grouped_ws.py | sed 's/^from \\./from qarl_kernels./'`; call 1: C =
         5f8ea66, before round 40; call 6: C = 3cbb563, its empty-consumer test in the K loop)
         against the tree's, forward and grad_input at 160-1024 rows an expert (eager
         do_bench): session 44's tail.py read grad_input 1.02-1.08x at 256-1024 with the
         kernel before first in 2 of 3 rounds.
  fp8    the FP8 WS kernel before its consumers skipped the tiles' empty halves (fp8_before.py:
         `git show 418bf94:kernels/fp8_grouped_ws.py | sed ...` as above) against the tree's,
         the GEMM alone on quantized rows, in CUDA graphs as the benchmark times it. Call 2
         adds fp8_inloop.py (call 1's tree: the test inside the K loop, f16a6d4; the same sed
         over the tree's file then) against the tree's (the test hoisted out of the loop).
  skew   the op's W4A16 paths (w4a16_grouped_linear, w4a16_grouped_grad_input) against bf16
         torch._grouped_mm under skewed routing (bench DECODE_SKEW, three seeds) at M >= 4096.

Usage: ab.py PART REPEATS [SHAPE...] (fp8: only these of bench.GROUPED_SHAPES, e.g. "W13 EP8")"""
import statistics
import sys
import time

import torch

import fp8_before
import fp8_inloop
import ws_before
from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_grouped_ws, w4a16_grouped_ws
from qarl_kernels.bench import DECODE_SKEW, GROUPED_SHAPES, TOP_K, _batch, _fp8_weights, \
    _w4a16_weights
from qarl_kernels.bench_setup import graph_us, median_us
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.moe_backward import w4a16_grouped_grad_input
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear


def balanced(cells: dict, repeats: int) -> dict:
    """Medians of each cell's times, run in the order A B .. B A `repeats` times."""
    times = {name: [] for name in cells}
    for _ in range(repeats):
        for name in list(cells) + list(reversed(cells)):
            times[name].append(cells[name]())
    return {name: (statistics.median(t), t) for name, t in times.items()}


def line(head: str, med: dict, ratios: list) -> str:
    return (head + ": " + ", ".join(f"{n} {m:.1f} ({' '.join(f'{v:.1f}' for v in t)})"
                                    for n, (m, t) in med.items())
            + " | " + ", ".join(f"{a}/{b} {med[a][0] / med[b][0]:.3f}" for a, b in ratios))


def part_w4a16(repeats):
    scheme = get_scheme("w4a16")
    cells = [("W13 E128", 128, 1536, 2048, [2560, 4096, 8192, 16384]),
             ("W2 E128", 128, 2048, 768, [2560, 4096, 8192, 16384]),
             ("W13 TP2", 128, 768, 2048, [4096, 8192, 16384])]
    for label, e, n, k, tokens in cells:
        qws, _ = _w4a16_weights(scheme, e, n, k)
        for m in tokens:
            counts, rows, _, x, _ = _batch(m, e, k)
            g = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
            same = (torch.equal(w4a16_grouped_ws.w4a16_grouped_ws(x, qws[0], counts),
                                ws_before.w4a16_grouped_ws(x, qws[0], counts))
                    and torch.equal(
                        w4a16_grouped_ws.w4a16_grouped_ws_grad_input(g, qws[0], counts),
                        ws_before.w4a16_grouped_ws_grad_input(g, qws[0], counts)))
            for what, name, a in (("forward", "w4a16_grouped_ws", x),
                                  ("grad_input", "w4a16_grouped_ws_grad_input", g)):
                med = balanced({
                    "before": lambda f=getattr(ws_before, name), a=a: median_us(
                        [lambda q=q: f(a, q, counts) for q in qws]),
                    "now": lambda f=getattr(w4a16_grouped_ws, name), a=a: median_us(
                        [lambda q=q: f(a, q, counts) for q in qws]),
                }, repeats)
                print(line(f"{label} M={m} ({rows // e} rows an expert) {what} us, same bits "
                           f"{same}", med, [("now", "before")]), flush=True)


def part_fp8(repeats, *labels):
    scheme = get_scheme("fp8-block")
    for label, e, n, k in GROUPED_SHAPES:
        if labels and label not in labels:
            continue
        qw, _ = _fp8_weights(scheme, e, n, k)
        for m in (1024, 2048, 4096, 4608, 16384):
            counts, rows, _, x, _ = _batch(m, e, k)
            xq, xs = fp8_quantize_activation(x)
            if not fp8_grouped_ws.applies(xq, qw):
                print(f"{label} M={m}: {rows} rows, the WS kernel does not apply", flush=True)
                continue
            tiles = fp8_grouped_ws.default_tiles(rows)
            now = fp8_grouped_ws.fp8_grouped_ws(xq, xs, qw, counts, tiles)
            same = all(torch.equal(now, mod.fp8_grouped_ws(xq, xs, qw, counts, tiles))
                       for mod in (fp8_before, fp8_inloop))
            half_empty = int(((counts % fp8_grouped_ws.BLOCK_M > 0)
                              & (counts % fp8_grouped_ws.BLOCK_M
                                 <= fp8_grouped_ws.ROWS_PER_CONSUMER)).sum())
            med = balanced({name: lambda f=mod.fp8_grouped_ws: graph_us(
                [lambda: f(xq, xs, qw, counts, tiles)])
                for name, mod in (("before", fp8_before), ("in-loop", fp8_inloop),
                                  ("now", fp8_grouped_ws))}, repeats)
            print(line(f"{label} M={m} ({rows // e} rows an expert, {half_empty} experts' last "
                       f"tile half empty, tiles {tiles}) GEMM us, same bits {same}", med,
                       [("now", "before"), ("in-loop", "before")]), flush=True)


def part_skew(repeats):
    scheme = get_scheme("w4a16")
    for label, e, n, k in [GROUPED_SHAPES[0], GROUPED_SHAPES[1], GROUPED_SHAPES[4]]:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        for m in (4096, 16384):
            for seed in range(3):
                counts, rows, _, x, offs = _batch(m, e, k, DECODE_SKEW, seed)
                g = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
                y = w4a16_grouped_linear(x, qws[0], counts)
                ref = torch._grouped_mm(x, bf16_t[0], offs=offs)
                err = float((y.float() - ref.float()).norm() / ref.float().norm())
                med = balanced({
                    "bf16": lambda: median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs)
                                               for w in bf16_t]),
                    "op": lambda: median_us([lambda q=q: w4a16_grouped_linear(x, q, counts)
                                             for q in qws]),
                    "grad bf16": lambda: median_us([lambda w=w: torch._grouped_mm(
                        g, w.transpose(1, 2), offs=offs) for w in bf16_t]),
                    "grad op": lambda: median_us([lambda q=q: w4a16_grouped_grad_input(
                        g, q, counts) for q in qws]),
                }, repeats)
                print(line(f"{label} M={m} top-{TOP_K} skew {DECODE_SKEW} seed {seed} ({rows // e}"
                           f" rows an expert, busiest {int(counts.max())}, empty "
                           f"{int((counts == 0).sum())}; forward vs bf16 relative error {err:.4f})"
                           " us", med, [("op", "bf16"), ("grad op", "grad bf16")]), flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    {"w4a16": part_w4a16, "fp8": part_fp8, "skew": part_skew}[sys.argv[1]](int(sys.argv[2]), *sys.argv[3:])
