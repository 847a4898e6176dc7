"""Session 41, call 3: the WS W4A16 kernel with its code ring split from the x ring (a loader
warp each), a weight row a dequantizing thread (64-byte swizzled code stages, 16-byte loads
and stores) and no wgmma for a consumer past its tile's rows, against round 36's kernel
(29208fa, imported as qarl_kernels.w4a16_grouped_ws_old) and dequantize + _grouped_mm. Each
ring configuration is checked against the reference on ragged shapes, then timed (do_bench
medians, weights rotated past L2)."""
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels import w4a16_grouped_ws_old as old
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import ceilings, median_us
from qarl_kernels.w4a16_dequantize import w4a16_dequantize

RINGS = [(2, 3, 2), (1, 4, 3), (2, 2, 2), (1, 6, 2)]  # x, code and operand stages


def check():
    scheme = get_scheme("w4a16")
    cases = [(8, 256, 512, [0, 130, 0, 257, 1, 128, 0, 300]), (4, 192, 768, [129, 0, 64, 255]),
             (3, 128, 2048, [512, 0, 1]), (2, 128, 256, [1, 0])]
    for v in RINGS:
        for e, n, k, counts in cases:
            torch.manual_seed(0)
            q = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
            tokens = torch.tensor(counts, device="cuda", dtype=torch.int32)
            x = torch.randn(sum(counts), k, device="cuda").bfloat16()
            got = ws.w4a16_grouped_ws(x, q, tokens, *v)
            torch.cuda.synchronize()
            want = scheme.reference_grouped_matmul(x, q, tokens.cpu()).float()
            err = ((got.float() - want).abs() - (2**-7) * want.abs()).max().item()
            same = torch.equal(ws.w4a16_grouped_ws(x, q, tokens, *v), got)
            print(f"check {v} e={e} n={n} k={k}: {err:.3g} "
                  f"({'OK' if err <= 1e-2 else 'BAD'}), repeats={same}", flush=True)


CASES = [("W13 E128", 128, 1536, 2048, 4096), ("W2 E128", 128, 2048, 768, 4096),
         ("W13 TP2", 128, 768, 2048, 4096), ("W13 E128", 128, 1536, 2048, 8192),
         ("W2 E128", 128, 2048, 768, 8192), ("W13 E128", 128, 1536, 2048, 16384),
         ("W13 EP8", 16, 1536, 2048, 4096)]


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
        t_dq = median_us([lambda q=q: torch._grouped_mm(
            x, w4a16_dequantize(q, counts).transpose(1, 2), offs=offs) for q in qws])
        t_old = median_us([lambda q=q: old.w4a16_grouped_ws(x, q, counts) for q in qws])
        print(f"{label} M={m} ({rows / e:.0f} rows/expert): bf16 {t_bf:.1f} us, dequant+grouped_mm"
              f" {t_dq:.1f} ({t_dq / t_bf:.2f}x), round 36 WS {t_old:.1f} ({t_old / t_bf:.2f}x)",
              flush=True)
        for v in RINGS:
            err = ((ws.w4a16_grouped_ws(x, qws[0], counts, *v).float() - ref).abs()
                   - 2**-7 * ref.abs()).max()
            t = median_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts, *v) for q in qws])
            print(f"  rings {v}: {t:.1f} us, {2 * rows * n * k / t / 1e6:.0f} TFLOP/s, "
                  f"{t / t_bf:.2f}x bf16's time, {t_old / t:.2f}x faster than round 36, "
                  f"err {err.item():.3g}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    check() if sys.argv[1] == "check" else time_all()
