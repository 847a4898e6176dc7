"""Session 40, call 2: variants of the warp-specialized W4A16 grouped GEMM
(kernels/w4a16_grouped_ws.py): 1 or 2 dequantizing warpgroups, a stage's wgmmas retired at once
or left in flight, 128- or 256-row tiles. Each is checked against the reference on ragged
shapes, then timed as call 1 (do_bench medians, weights rotated past L2)."""
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import ceilings, median_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear

# (block_m, block_n, stages, b_stages, dequant_wgs, in_flight)
VARIANTS = [(128, 128, 3, 2, 1, False), (128, 128, 3, 2, 1, True), (128, 128, 3, 2, 2, True),
            (128, 128, 3, 2, 2, False), (256, 128, 2, 2, 1, True), (256, 128, 2, 2, 1, False)]


def run(x, q, counts, v):
    return ws.w4a16_grouped_ws(x, q, counts, *v[:4], dequant_wgs=v[4], in_flight=v[5])


def check():
    scheme = get_scheme("w4a16")
    cases = [(8, 256, 512, [0, 130, 0, 257, 1, 128, 0, 300]), (4, 192, 768, [129, 0, 64, 255]),
             (2, 128, 256, [1, 0])]
    for v in VARIANTS:
        for e, n, k, counts in cases:
            torch.manual_seed(0)
            q = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
            tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
            x = torch.randn(sum(counts), k, device="cuda").bfloat16()
            got = run(x, q, tokens, v)
            torch.cuda.synchronize()
            want = scheme.reference_grouped_matmul(x, q, tokens.cpu()).float()
            err = ((got.float() - want).abs() - (2**-7) * want.abs()).max().item()
            same = torch.equal(run(x, q, tokens, v), got)
            print(f"check {v} e={e} n={n} k={k}: {err:.3g} "
                  f"({'OK' if err <= 1e-2 else 'BAD'}), repeats={same}", flush=True)


CASES = [("W13 E128", 128, 1536, 2048, 4096), ("W2 E128", 128, 2048, 768, 4096),
         ("W13 TP2", 128, 768, 2048, 4096), ("W13 EP8", 16, 1536, 2048, 4096),
         ("W13 E128", 128, 1536, 2048, 16384)]


def time_all():
    peak = ceilings()
    print(f"copy {peak['copy_GBps']:.0f} GB/s, bf16 {peak['bf16_TFLOPs']:.0f} TFLOP/s", flush=True)
    scheme = get_scheme("w4a16")
    weights = {}
    for label, e, n, k, m in CASES:
        if label not in weights:
            weights.clear()
            weights[label] = _w4a16_weights(scheme, e, n, k)
        qws, bf16_t = weights[label]
        counts, rows, touched, x, offs = _batch(m, e, k)
        ref = torch._grouped_mm(x, bf16_t[0], offs=offs).float()
        t_bf = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t])
        t_op = median_us([lambda q=q: w4a16_grouped_linear(x, q, counts) for q in qws])
        print(f"{label} M={m}: bf16 {t_bf:.1f} us, op today {t_op:.1f} us ({t_op / t_bf:.2f}x)",
              flush=True)
        for v in VARIANTS:
            err = ((run(x, qws[0], counts, v).float() - ref).abs() - 2**-7 * ref.abs()).max()
            t = median_us([lambda q=q: run(x, q, counts, v) for q in qws])
            print(f"  {v}: {t:.1f} us, {2 * rows * n * k / t / 1e6:.0f} TFLOP/s, "
                  f"{t / t_bf:.2f}x bf16's time, err {err.item():.3g}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    check() if sys.argv[1] == "check" else time_all()
