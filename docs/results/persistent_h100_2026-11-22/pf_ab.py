"""Round 12: L2 prefetch of the weight words PREFETCH blocks past the ring (prefetch.global.L2,
one 64-byte row segment per thread), route tiles; alternating 3 rounds, medians."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes
from _w4g_pf import w4a16_grouped_gluon as gp

CASES = [("W13 TP2", 128, 768, 2048, 8), ("W2 E128", 128, 2048, 768, 8),
         ("W13 E128", 128, 1536, 2048, 8), ("W13 EP8", 16, 1536, 2048, 8),
         ("W2 EP8", 16, 2048, 768, 8), ("W13 EP8", 16, 1536, 2048, 64),
         ("W13 E128", 128, 1536, 2048, 64), ("W13 TP2", 128, 768, 2048, 64),
         ("W13 E128", 128, 1536, 2048, 1)]
for label, e, n, k, m in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    base = gluon_tiles(x.shape[0], e, n, k)
    want = g(x, qws[0], counts, *base)
    runs = [("committed", base, 0)] + [("prefetch", base, p) for p in (0, 1, 2, 4, 8)]
    if label == "W13 TP2" and m == 8:
        runs += [("prefetch", (8, 64, 3, None, 5), p) for p in (0, 2, 4)]
    fns = {}
    for name, t, p in runs:
        f = (lambda q, t=t: g(x, q, counts, *t)) if name == "committed" else \
            (lambda q, t=t, p=p: gp(x, q, counts, *t, prefetch=p))
        y = f(qws[0])
        same = torch.equal(y, want) if t == base else \
            ((y.float() - want.float()).norm() / want.float().norm()).item() < 1e-2
        fns[(name, t, p)] = (f, same)
    times = {key: [] for key in fns}
    for _ in range(3):
        for key, (f, _) in fns.items():
            times[key].append(graph_us([lambda q=q, f=f: f(q) for q in qws], calls=STEP_CALLS))
    med = {key: sorted(v)[1] for key, v in times.items()}
    t0 = med[("committed", base, 0)]
    print(f"{label} M={m} {base}: committed {t0:.2f} us | " + "; ".join(
        f"{t if t != base else ''} pf{p} {med[(nm, t, p)]:.2f} ({t0 / med[(nm, t, p)]:.3f}x)"
        f"{'' if fns[(nm, t, p)][1] else ' WRONG'}" for nm, t, p in fns if nm == "prefetch"),
        flush=True)
    del qws
