"""Round 12 A/B, alternating 5 times: W13 EP8 M=256 persistent 2/3 per SM vs the route;
W2 E128 M=16 with a 96-register cap; W13 EP8 M=8 persistent 3."""
import sys
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes

CASES = [("W13 EP8", 16, 1536, 2048, 256, [(128, 128, 2, None, 2), (128, 128, 2, None, 3)]),
         ("W13 EP8", 16, 1536, 2048, 128, [(64, 64, 2, None, 3), (128, 128, 2, None, 2)]),
         ("W13 EP8", 16, 1536, 2048, 8, [(16, 64, 3, None, 3), (16, 64, 4, None, 3)]),
         ("W2 EP8", 16, 2048, 768, 256, [(64, 128, 2, None, None), (128, 64, 2, None, 3)]),
         ("W2 E128", 128, 2048, 768, 16, [(16, 128, 3, 96, None), (16, 128, 3, 96, 3),
                                          (16, 128, 3, None, 3)]),
         ("W2 E128", 128, 2048, 768, 128, [(16, 128, 3, 128, 3), (16, 128, 3, 128, 4)]),
         ("W2 E128", 128, 2048, 768, 1024, [(64, 128, 2, None, None), (64, 128, 2, None, 3)])]
for label, e, n, k, m, alts in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    base = gluon_tiles(x.shape[0], e, n, k)
    want = g(x, qws[0], counts, *base).float()
    cfgs = [base] + alts
    for c in alts:
        y = g(x, qws[0], counts, *c).float()
        assert ((y - want).norm() / want.norm()).item() < 1e-2, c
    times = {c: [] for c in cfgs}
    for _ in range(5):
        for c in cfgs:
            times[c].append(graph_us([lambda q=q: g(x, q, counts, *c) for q in qws],
                                     calls=STEP_CALLS))
    med = {c: sorted(v)[2] for c, v in times.items()}
    print(f"{label} M={m}: route {base} {med[base]:.1f} us; " + "; ".join(
        f"{c} {med[c]:.1f} ({med[base] / med[c]:.3f}x)" for c in alts), flush=True)
    del qws
