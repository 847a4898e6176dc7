"""FA3-style ping-pong (w4g_ws4) against the same two consumers without an order (w4g_ws3)
and the op, 10 calls per graph, bits compared with the committed kernel at 128-row tiles."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as base
import w4g_ws3, w4g_ws4

CASES = [("W13 EP8", 16, 1536, 2048, 64, [(64, 3), (64, 4), (32, 3)]),
         ("W2 EP8", 16, 2048, 768, 64, [(64, 3), (64, 2)]),
         ("W13 EP8", 16, 1536, 2048, 32, [(32, 3), (32, 4)]),
         ("W13 EP8", 16, 1536, 2048, 256, [(64, 3)]),
         ("W13 E128", 128, 1536, 2048, 256, [(32, 3), (32, 4)])]


def main():
    for label, e, n, k, m, configs in CASES:
        counts = route(m, e, 8)
        qws = _rotated_w4a16(e, n, k)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        t_op = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws], calls=10)
        res = []
        for bm, st in configs:
            want = base(x, qws[0], counts, bm, 128, 2)
            for name, mod in (("unordered", w4g_ws3), ("ping-pong", w4g_ws4)):
                y = mod.w4a16_grouped_gluon(x, qws[0], counts, bm, st, 80)
                torch.cuda.synchronize()
                ok = torch.equal(y, want)
                t = graph_us([lambda q=q: mod.w4a16_grouped_gluon(x, q, counts, bm, st, 80)
                              for q in qws], calls=10)
                res.append(f"{name} m{bm} st{st} {t:.1f}{'' if ok else ' WRONG'}")
        print(f"{label} M={m}: op {t_op:.1f} | " + "; ".join(res), flush=True)
        del qws


if __name__ == "__main__":
    main()
