"""Round 12: the two M=8 bandwidth misses (W2 E128, W13 TP2), alternating 5 rounds of graphs of
10 calls; median per config."""
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes

CASES = [("W2 E128", 128, 2048, 768, 8, [(8, 128, 3, 128, 3), (8, 128, 4, None, 3),
                                         (8, 128, 3, None, 2), (8, 128, 3, None, 4),
                                         (8, 128, 4, 128, 4), (8, 64, 3, None, 6),
                                         (8, 64, 4, None, 5), (8, 128, 3, 96, 4)]),
         ("W13 TP2", 128, 768, 2048, 8, [(8, 128, 3, 128, None), (8, 128, 3, None, None),
                                         (8, 64, 3, None, 5), (8, 64, 4, None, 5),
                                         (8, 64, 4, None, None), (8, 128, 4, None, 3),
                                         (8, 128, 2, 96, None), (8, 64, 5, None, None)])]
for label, e, n, k, m, alts in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    base = gluon_tiles(x.shape[0], e, n, k)
    want = g(x, qws[0], counts, *base).float()
    ok = []
    for c in alts:
        try:
            y = g(x, qws[0], counts, *c).float()
            assert ((y - want).norm() / want.norm()).item() < 1e-2
            ok.append(c)
        except Exception as ex:
            print(f"  {c}: {type(ex).__name__}", flush=True)
    cfgs = [base] + ok
    times = {c: [] for c in cfgs}
    for _ in range(5):
        for c in cfgs:
            times[c].append(graph_us([lambda q=q: g(x, q, counts, *c) for q in qws],
                                     calls=STEP_CALLS))
    med = {c: sorted(v)[2] for c, v in times.items()}
    print(f"{label} M={m}: route {base} {med[base]:.2f} us; " + "; ".join(
        f"{c} {med[c]:.2f} ({med[base] / med[c]:.3f}x)" for c in sorted(ok, key=med.get)),
        flush=True)
    del qws
