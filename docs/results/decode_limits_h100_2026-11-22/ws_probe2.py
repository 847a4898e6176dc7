"""Occupancy sweep of the one-warp-loader Gluon W4A16 kernel (w4g_ws): tiles x maxnreg, against
the op (w4a16_grouped_matmul, which routes) in CUDA graphs."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as base
import w4g_ws

SMALL = [(16, 64, 3, 56), (16, 64, 4, 56), (16, 128, 3, 64), (16, 128, 4, 72), (16, 64, 6, 56),
         (32, 64, 3, 56), (32, 128, 3, 80)]
MID = [(64, 64, 2, 64), (64, 64, 3, 64), (64, 64, 4, 64), (64, 64, 2, 72), (64, 64, 3, 80),
       (32, 64, 3, 56), (32, 64, 4, 56), (32, 64, 4, 64), (32, 64, 6, 56), (32, 128, 3, 80),
       (32, 128, 4, 80), (64, 128, 2, 88), (64, 128, 3, 104)]
CASES = [("W13 EP8", 16, 1536, 2048, 8, SMALL), ("W2 EP8", 16, 2048, 768, 8, SMALL),
         ("W13 EP8", 16, 1536, 2048, 32, MID), ("W13 EP8", 16, 1536, 2048, 64, MID),
         ("W2 EP8", 16, 2048, 768, 32, MID), ("W2 EP8", 16, 2048, 768, 64, MID),
         ("W13 E128", 128, 1536, 2048, 64, SMALL + MID[:6])]


def main():
    for label, e, n, k, m, tiles_list in CASES:
        qws = _rotated_w4a16(e, n, k)
        counts = route(m, e, 8)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        t_op = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws])
        res = []
        for bm, bn, st, r in tiles_list:
            want = base(x, qws[0], counts, bm, bn, 2)
            try:
                y = w4g_ws.w4a16_grouped_gluon(x, qws[0], counts, bm, bn, st, maxnreg=r)
            except Exception as err:
                print("  skip", (bm, bn, st, r), str(err).splitlines()[0][:100], flush=True)
                continue
            if not torch.equal(y, want):
                print(f"  WRONG {label} M={m} {(bm, bn, st, r)}", flush=True)
                continue
            t = graph_us([lambda q=q: w4g_ws.w4a16_grouped_gluon(x, q, counts, bm, bn, st,
                                                                 maxnreg=r) for q in qws])
            res.append((t, f"{(bm, bn, st)} r{r}"))
        res.sort()
        print(f"{label} M={m}: op {t_op:.1f} | ws " + "; ".join(f"{t:.1f} {nm}" for t, nm in res[:7]),
              flush=True)
        del qws


if __name__ == "__main__":
    main()
