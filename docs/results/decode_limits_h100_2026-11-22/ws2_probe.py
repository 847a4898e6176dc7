"""Two loader warps (weights+scales on a deep ring, x on a shallow one) against the committed
kernel and the one-loader version, 10 calls per graph, bits checked against the committed
kernel."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul, gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as base
import w4g_ws, w4g_ws2

CALLS = 10  # calls per captured graph



CASES = [  # label, E, N, K, M, [(bm, bn, w stages, x stages, maxnreg)]
    ("lone", 16, 384, 8192, 64, [(64, 64, 6, 2, 80), (64, 64, 8, 2, 80), (64, 64, 8, 3, 80)]),
    ("W13 EP8", 16, 1536, 2048, 64, [(64, 64, 6, 2, 80), (64, 64, 8, 2, 80), (64, 64, 6, 3, 80),
                                     (64, 64, 8, 3, 80), (64, 64, 12, 2, 80), (64, 64, 4, 2, 64),
                                     (64, 64, 6, 2, 64), (64, 128, 6, 2, 104),
                                     (64, 128, 8, 2, 120)]),
    ("W13 EP8", 16, 1536, 2048, 32, [(32, 64, 6, 2, 56), (32, 64, 8, 3, 56), (32, 128, 6, 2, 80),
                                     (64, 64, 6, 2, 80), (32, 64, 12, 3, 64)]),
    ("W13 EP8", 16, 1536, 2048, 8, [(16, 64, 8, 2, 56), (16, 64, 12, 3, 56), (16, 128, 8, 3, 64)]),
    ("W2 EP8", 16, 2048, 768, 64, [(64, 128, 6, 2, 104), (64, 128, 6, 2, 120), (64, 64, 6, 2, 80),
                                   (64, 64, 6, 3, 80), (64, 128, 6, 3, 120)]),
    ("W2 EP8", 16, 2048, 768, 8, [(16, 64, 6, 2, 56), (16, 128, 6, 2, 64), (16, 128, 6, 3, 64)]),
    ("W13 EP8", 16, 1536, 2048, 256, [(128, 128, 6, 2, 120), (128, 64, 8, 2, 104),
                                      (128, 64, 6, 2, 120)]),
    ("W13 E128", 128, 1536, 2048, 256, [(32, 128, 6, 3, 80), (32, 128, 8, 2, 80),
                                        (32, 64, 8, 3, 56)]),
]


def main():
    for label, e, n, k, m, configs in CASES:
        counts = route(m, e, 8)
        qws = _rotated_w4a16(e, n, k)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        t_op = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws], calls=CALLS)
        best = gluon_tiles(x.shape[0], e, k) or (64, 64, 3)
        t_base = graph_us([lambda q=q: base(x, q, counts, *best) for q in qws], calls=CALLS)
        res = []
        for bm, bn, ws, xs, r in configs:
            want = base(x, qws[0], counts, bm, bn, 2)
            try:
                y = w4g_ws2.w4a16_grouped_gluon(x, qws[0], counts, bm, bn, ws, maxnreg=r,
                                                x_stages=xs)
            except Exception as err:
                print("  skip", (bm, bn, ws, xs, r), str(err).splitlines()[0][:100], flush=True)
                continue
            ok = torch.equal(y, want)
            t = graph_us([lambda q=q: w4g_ws2.w4a16_grouped_gluon(
                x, q, counts, bm, bn, ws, maxnreg=r, x_stages=xs) for q in qws], calls=CALLS)
            res.append((t, f"{(bm, bn, ws, xs)} r{r}{'' if ok else ' WRONG'}"))
        res.sort()
        print(f"{label} M={m} N={n} K={k}: op {t_op:.1f}, gluon {best} {t_base:.1f} | 2 loaders " +
              "; ".join(f"{t:.1f} {nm}" for t, nm in res), flush=True)
        del qws


if __name__ == "__main__":
    main()
