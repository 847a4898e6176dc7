"""Session 44: the WS W4A16 kernel's m64 row blocks (a consumer skips the wgmmas of a 64-row
block past its tile's rows) against the kernel before (ws_before.py beside this script,
5f8ea66's with its imports made absolute: `git show 5f8ea66:kernels/w4a16_grouped_ws.py | sed
's/^from \./from qarl_kernels./' > docs/results/ws_tail_h200_2026-11-29/ws_before.py`), forward
and grad_input, eager (do_bench medians; EP8 in CUDA graphs of STEP_CALLS calls, its eager calls
being the host's; weights rotated past L2), rounds alternating; beside them bf16
torch._grouped_mm, dequantize + _grouped_mm (the op's path from 2048 rows an expert) and
w4a16_grouped_matmul (the op's path below WS_ROWS_PER_EXPERT, "decode kernel": the Gluon kernel
up to 128 rows an expert, the Triton kernel past them).
Usage: tail.py ROUNDS [SET] (SET: a key of TOKENS)"""
import statistics
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as new
import ws_before as old  # this folder's copy of the kernel before
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from qarl_kernels.bench_setup import median_us as eager_us
from qarl_kernels.w4a16_dequantize import w4a16_dequantize
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul

SHAPES = [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768),
          ("W13 TP2", 128, 768, 2048), ("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)]
#: tokens (top-8) of each set: E128 2560 -> 160 rows an expert, 4096 -> 256 +- 16, 4608 -> 288,
#: 5120 -> 320, 8192 -> 512, 16384 -> 1024; EP8 (M tokens top-8 over 16 experts) M / 2 rows
TOKENS = {"e128": {128: [2560, 4096, 4608, 5120, 8192, 16384]},
          "ep8": {16: [320, 512, 576, 2048]},
          "low": {128: [1536, 2048, 2304], 16: [192, 256, 288]},
          "bound": {128: [2048, 2176, 2304], 16: [256, 272, 288]},
          "large": {128: [8192, 16384], 16: [2048]},
          "start": {128: [2064], 16: [258]}}


def main(rounds, cell_set):
    scheme = get_scheme("w4a16")
    for label, e, n, k in SHAPES:
        if e not in TOKENS[cell_set]:
            continue
        median_us = eager_us if e == 128 else (lambda fns: graph_us(fns, calls=STEP_CALLS))
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        for m in TOKENS[cell_set][e]:
            counts, rows, _, x, offs = _batch(m, e, k)
            g = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
            same_f = torch.equal(new.w4a16_grouped_ws(x, qws[0], counts),
                                 old.w4a16_grouped_ws(x, qws[0], counts))
            same_g = torch.equal(new.w4a16_grouped_ws_grad_input(g, qws[0], counts),
                                 old.w4a16_grouped_ws_grad_input(g, qws[0], counts))
            cells = {
                "bf16": lambda: median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs)
                                           for w in bf16_t]),
                "dequant+mm": lambda: median_us([lambda q=q: torch._grouped_mm(
                    x, w4a16_dequantize(q, counts).transpose(1, 2), offs=offs) for q in qws]),
                "decode kernel": lambda: median_us([
                    lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws]),
                "fwd before": lambda: median_us([lambda q=q: old.w4a16_grouped_ws(x, q, counts)
                                                 for q in qws]),
                "fwd m64": lambda: median_us([lambda q=q: new.w4a16_grouped_ws(x, q, counts)
                                              for q in qws]),
                "grad bf16": lambda: median_us([lambda w=w: torch._grouped_mm(
                    g, w.transpose(1, 2), offs=offs) for w in bf16_t]),
                "grad before": lambda: median_us([
                    lambda q=q: old.w4a16_grouped_ws_grad_input(g, q, counts) for q in qws]),
                "grad m64": lambda: median_us([
                    lambda q=q: new.w4a16_grouped_ws_grad_input(g, q, counts) for q in qws]),
            }
            times = {name: [] for name in cells}
            for r in range(rounds):
                order = list(cells) if r % 2 == 0 else list(reversed(cells))
                for name in order:
                    times[name].append(cells[name]())
            med = {name: statistics.median(t) for name, t in times.items()}
            tail = int((counts % 256).gt(0).sum())
            print(f"{label} M={m} ({rows} rows, {rows // e} an expert, busiest {int(counts.max())},"
                  f" {tail} partial tiles): "
                  + ", ".join(f"{name} {med[name]:.1f}" for name in cells)
                  + f" | fwd m64/before {med['fwd m64'] / med['fwd before']:.3f}, "
                  f"grad m64/before {med['grad m64'] / med['grad before']:.3f}, "
                  f"fwd m64/bf16 {med['fwd m64'] / med['bf16']:.2f}, "
                  f"dequant/bf16 {med['dequant+mm'] / med['bf16']:.2f}, "
                  f"fwd m64/decode kernel {med['fwd m64'] / med['decode kernel']:.2f}, "
                  f"grad m64/bf16 {med['grad m64'] / med['grad bf16']:.2f}; same bits fwd "
                  f"{same_f} grad {same_g}", flush=True)
        del qws, bf16_t


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "e128")
