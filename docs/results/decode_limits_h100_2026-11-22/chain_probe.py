"""Lone-CTA chain vs full grid: the Gluon W4A16 kernel with the unpack replaced by moves
(mode 1), with the two halves of a block on two accumulators (mode 3), and the one-warp-loader
version, 10 calls per graph."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
import w4g_diag2, w4g_ws

CALLS = 10  # calls per captured graph



def main():
    e = 16
    for m, n, k, tiles in ((64, 384, 8192, (64, 64, 3)), (64, 1536, 2048, (64, 64, 3)),
                           (64, 2048, 768, (64, 128, 3)), (256, 1536, 2048, (128, 128, 2)),
                           (32, 1536, 2048, (32, 128, 2))):
        counts = route(m, e, 8)
        qws = _rotated_w4a16(e, n, k)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        y0 = w4g_diag2.w4a16_grouped_gluon(x, qws[0], counts, *tiles, mode=0).float()
        y3 = w4g_diag2.w4a16_grouped_gluon(x, qws[0], counts, *tiles, mode=3).float()
        err = ((y3 - y0).norm() / y0.norm()).item()
        out = []
        for mode in (0, 1, 3):
            t = graph_us([lambda q=q: w4g_diag2.w4a16_grouped_gluon(x, q, counts, *tiles, mode=mode)
                          for q in qws], calls=CALLS)
            out.append(f"mode{mode} {t:.1f}")
        r = 80 if tiles[1] == 64 else 120
        t = graph_us([lambda q=q: w4g_ws.w4a16_grouped_gluon(x, q, counts, *tiles, maxnreg=r)
                      for q in qws], calls=CALLS)
        out.append(f"ws {t:.1f}")
        print(f"M={m} N={n} K={k} {tiles}: " + ", ".join(out) + f" (mode3 vs mode0 rel {err:.1e})",
              flush=True)
        del qws


if __name__ == "__main__":
    main()
