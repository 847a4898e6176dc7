"""The unpack without its byte permute and shift (mode 6 of w4g_diag2: lop3, sub, mul per
register, the ALU work an interleaved nibble order would leave; wrong numbers, timing only)
against the committed unpack (mode 0) and no unpack (mode 1), 10 calls per graph."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
import w4g_diag2 as g


def main():
    for label, e, n, k, m, tiles in (
            ("W13 EP8", 16, 1536, 2048, 64, (64, 64, 3)), ("W13 EP8", 16, 1536, 2048, 256, (128, 128, 2)),
            ("W2 EP8", 16, 2048, 768, 64, (64, 128, 3)), ("W13 E128", 128, 1536, 2048, 256, (32, 128, 3)),
            ("W2 E128", 128, 2048, 768, 1024, (64, 128, 3))):
        counts = route(m, e, 8)
        qws = _rotated_w4a16(e, n, k)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        t = {mode: graph_us([lambda q=q: g.w4a16_grouped_gluon(x, q, counts, *tiles, mode=mode)
                             for q in qws], calls=10) for mode in (0, 6, 1)}
        print(f"{label} M={m} {tiles}: committed unpack {t[0]:.1f} us, without permute and shift "
              f"{t[6]:.1f} us, no unpack {t[1]:.1f} us", flush=True)
        del qws


if __name__ == "__main__":
    main()
