"""Session 40, call 1: the warp-specialized W4A16 grouped GEMM (kernels/w4a16_grouped_ws.py)
at training sizes. Part `check`: against the reference on ragged shapes. Part `time`: against
bf16 torch._grouped_mm and the op the trainer takes today (w4a16_grouped_linear: the Triton
kernel below 512 rows an expert, dequantize + grouped_mm from there), weights rotated past L2
(do_bench medians, as the bench's Kernels section)."""
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import ceilings, median_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear

TILES = [(128, 3, 2), (128, 3, 3), (64, 4, 2)]


def check():
    scheme = get_scheme("w4a16")
    cases = [(8, 256, 512, [0, 130, 0, 257, 1, 128, 0, 300]), (4, 192, 768, [129, 0, 64, 255]),
             (3, 128, 2048, [512, 0, 1]), (2, 128, 256, [1, 0])]
    for tiles in TILES:
        for e, n, k, counts in cases:
            torch.manual_seed(0)
            q = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
            tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
            x = torch.randn(sum(counts), k, device="cuda").bfloat16()
            got = ws.w4a16_grouped_ws(x, q, tokens, *tiles)
            torch.cuda.synchronize()
            want = scheme.reference_grouped_matmul(x, q, tokens.cpu()).float()
            err = ((got.float() - want).abs() - (2**-7) * want.abs()).max().item()
            same = torch.equal(ws.w4a16_grouped_ws(x, q, tokens, *tiles), got)
            print(f"check tiles={tiles} e={e} n={n} k={k}: max(|d| - 2^-7|ref|) = {err:.3g} "
                  f"({'OK' if err <= 1e-2 else 'BAD'}), repeats={same}", flush=True)


SHAPES = [("W13 E128", 128, 1536, 2048, None), ("W2 E128", 128, 2048, 768, None),
          ("W13 EP8", 16, 1536, 2048, None), ("W2 EP8", 16, 2048, 768, None),
          ("W13 TP2", 128, 768, 2048, None)]


def time_all(tokens_list):
    peak = ceilings()
    print(f"copy {peak['copy_GBps']:.0f} GB/s, bf16 {peak['bf16_TFLOPs']:.0f} TFLOP/s", flush=True)
    scheme = get_scheme("w4a16")
    print("| shape | M | rows/expert | bf16 grouped_mm us | op today us | ws us (tiles) | "
          "ws TFLOP/s | ws / bf16 time | today / ws |")
    for label, e, n, k, _ in SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        for m in tokens_list:
            counts, rows, touched, x, offs = _batch(m, e, k)
            ref = torch._grouped_mm(x, bf16_t[0], offs=offs)
            t_bf = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t])
            t_op = median_us([lambda q=q: w4a16_grouped_linear(x, q, counts) for q in qws])
            best = None
            for tiles in TILES[:2]:
                y = ws.w4a16_grouped_ws(x, qws[0], counts, *tiles)
                err = ((y.float() - ref.float()).abs() - 2**-7 * ref.float().abs()).max().item()
                t = median_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts, *tiles)
                               for q in qws])
                print(f"  {label} M={m} tiles={tiles}: {t:.1f} us, err {err:.3g}", flush=True)
                if best is None or t < best[0]:
                    best = (t, tiles)
            t, tiles = best
            print(f"| {label} | {m} | {rows // e} | {t_bf:.1f} | {t_op:.1f} | {t:.1f} {tiles} | "
                  f"{2 * rows * n * k / t / 1e6:.0f} | {t / t_bf:.2f} | {t_op / t:.2f} |",
                  flush=True)
        del qws, bf16_t


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    if sys.argv[1] == "check":
        check()
    else:
        time_all([int(v) for v in sys.argv[2:]])
