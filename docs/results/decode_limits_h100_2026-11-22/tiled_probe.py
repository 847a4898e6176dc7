"""Pre-tiled weight words (each TMA box 4-8 contiguous KB) against the serving layout (each box
64-byte pieces of 64-128 rows 384-1024 bytes apart), the committed Gluon kernel otherwise,
10 calls per graph, bits compared."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
import w4g_diag2 as g


def main():
    for label, e, n, k, m, tiles in (
            ("lone", 16, 384, 8192, 64, (64, 64, 3)), ("W13 EP8", 16, 1536, 2048, 64, (64, 64, 3)),
            ("W13 EP8", 16, 1536, 2048, 32, (32, 128, 2)),
            ("W13 EP8", 16, 1536, 2048, 256, (128, 128, 2)),
            ("W2 EP8", 16, 2048, 768, 64, (64, 128, 3)), ("W2 EP8", 16, 2048, 768, 256, (128, 128, 2)),
            ("W13 E128", 128, 1536, 2048, 256, (32, 128, 3)),
            ("W2 E128", 128, 2048, 768, 256, (32, 128, 3)), ("W13 E128", 128, 1536, 2048, 1024, (64, 128, 3))):
        counts = route(m, e, 8)
        qws = _rotated_w4a16(e, n, k)
        tiled = [g.pre_tile(q.data, tiles[1]) for q in qws]
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        same = torch.equal(g.w4a16_grouped_gluon(x, qws[0], counts, *tiles),
                           g.w4a16_grouped_gluon(x, qws[0], counts, *tiles, mode=4, tiled=tiled[0]))
        t0 = graph_us([lambda q=q: g.w4a16_grouped_gluon(x, q, counts, *tiles) for q in qws],
                      calls=10)
        t4 = graph_us([lambda q=q, t=t: g.w4a16_grouped_gluon(x, q, counts, *tiles, mode=4, tiled=t)
                       for q, t in zip(qws, tiled)], calls=10)
        print(f"{label} M={m} N={n} K={k} {tiles}: serving layout {t0:.1f} us, pre-tiled {t4:.1f} us "
              f"({t0 / t4:.2f}x), same bits {same}", flush=True)
        del qws, tiled


if __name__ == "__main__":
    main()
