"""EP8 mid batches through the op (w4a16_grouped_matmul, the routed tiles of round 13) against
round 12's tiles, uniform and skewed routing, alternating 5 rounds, graphs of 10 calls."""
import statistics

import torch

from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme


def round12(pe, k):
    return (64, 64, 2, None, None) if pe < 128 else (128, 128 if k >= 2048 else 64, 2, None, None)


scheme = get_scheme("w4a16")
for label, e, n, k in [("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)]:
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for m in (128, 136, 160, 192, 208, 224, 240):
        for skew in (0.0, 0.5):
            counts = route(m, e, TOP_K, skew=skew, seed=1)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            want = scheme.reference_grouped_matmul(x, q0, counts.cpu()).float()
            y = w4a16_grouped_matmul(x, q0, counts).float()
            assert float((y - want).norm() / want.norm()) < 1e-2
            old = round12(rows // e, k)
            new = gluon_tiles(rows, e, n, k)
            fns = [[lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws],
                   [lambda q=q: w4a16_grouped_gluon(x, q, counts, *old) for q in qws]]
            ts = [[], []]
            for _ in range(5):
                for i in (0, 1):
                    ts[i].append(graph_us(fns[i], calls=STEP_CALLS))
            a, b = (statistics.median(t) for t in ts)
            print(f"{label} M={m} skew {skew} max/mean {int(counts.max())}/{rows / e:.0f}: "
                  f"op {new} {a:.1f} us, round 12 {old} {b:.1f} us: {b / a:.2f}x", flush=True)
