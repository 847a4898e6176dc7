"""Each N-block starting its K loop at a different block (mode 5 of w4g_diag2), so the CTAs of
one expert, which launch together, do not read the same x slice at the same time; against the
committed order, 10 calls per graph."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
import w4g_diag2 as g


def main():
    for label, e, n, k, m, tiles in (
            ("W13 EP8", 16, 1536, 2048, 64, (64, 64, 3)), ("W13 EP8", 16, 1536, 2048, 32, (32, 128, 2)),
            ("W13 EP8", 16, 1536, 2048, 256, (128, 128, 2)), ("W2 EP8", 16, 2048, 768, 64, (64, 128, 3)),
            ("W2 EP8", 16, 2048, 768, 256, (128, 128, 2)), ("W13 E128", 128, 1536, 2048, 256, (32, 128, 3))):
        counts = route(m, e, 8)
        qws = _rotated_w4a16(e, n, k)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        y0 = g.w4a16_grouped_gluon(x, qws[0], counts, *tiles).float()
        y5 = g.w4a16_grouped_gluon(x, qws[0], counts, *tiles, mode=5).float()
        err = ((y5 - y0).norm() / y0.norm()).item()
        t0 = graph_us([lambda q=q: g.w4a16_grouped_gluon(x, q, counts, *tiles) for q in qws], calls=10)
        t5 = graph_us([lambda q=q: g.w4a16_grouped_gluon(x, q, counts, *tiles, mode=5) for q in qws],
                      calls=10)
        print(f"{label} M={m} {tiles}: committed order {t0:.1f} us, rotated {t5:.1f} us "
              f"({t0 / t5:.2f}x), rel diff {err:.1e}", flush=True)
        del qws


if __name__ == "__main__":
    main()
