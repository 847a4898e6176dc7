"""Round 12: the tuner's single-run leads, alternating 5 rounds, medians: TP2 M=16-64 with a
96-register cap and two stages (GEMM and fused), E128 M=1024 with two stages."""
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes

CASES = [("W13 TP2", 128, 768, 2048, m, [(8, 128, 2, 96, None), (8, 128, 2, 96, 3),
                                          (8, 128, 3, 96, 3)],
          [(8, 64, 2, 96), (8, 64, 3, 96)]) for m in (16, 32, 64)] + [
    ("W13 TP2", 128, 768, 2048, 8, [(8, 128, 2, 96, None), (8, 128, 2, 96, 3)],
     [(8, 64, 2, 96), (8, 64, 3, 96)]),
    ("W13 E128", 128, 1536, 2048, 1024, [(64, 128, 2, None, None)], []),
    ("W2 E128", 128, 2048, 768, 1024, [(64, 128, 2, None, None)], []),
    ("W13 E128", 128, 1536, 2048, 64, [(8, 128, 2, 96, None)], [(8, 64, 2, 96)])]
for label, e, n, k, m, gemm, fused in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    probs = torch.rand(x.shape[0], device="cuda")
    base = gluon_tiles(x.shape[0], e, n, k)
    fbase = gluon_swiglu_tiles(x.shape[0], e, n, k)
    want = g(x, qws[0], counts, *base).float()
    fwant = g(x, qws[0], counts, *fbase, swiglu=True, probs=probs).float()
    runs = {("gemm", base): lambda q, t=base: g(x, q, counts, *t)}
    runs.update({("gemm", t): (lambda q, t=t: g(x, q, counts, *t)) for t in gemm})
    if label.startswith("W13"):
        runs[("fused", fbase)] = lambda q, t=fbase: g(x, q, counts, *t, swiglu=True, probs=probs)
        runs.update({("fused", t): (lambda q, t=t: g(x, q, counts, *t, swiglu=True, probs=probs))
                     for t in fused})
    for (kind, t), f in runs.items():
        ref = want if kind == "gemm" else fwant
        err = ((f(qws[0]).float() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, (kind, t, err)
    times = {key: [] for key in runs}
    for _ in range(5):
        for key, f in runs.items():
            times[key].append(graph_us([lambda q=q, f=f: f(q) for q in qws], calls=STEP_CALLS))
    med = {key: sorted(v)[2] for key, v in times.items()}
    for kind, b in (("gemm", base), ("fused", fbase)):
        if (kind, b) not in med:
            continue
        print(f"{label} M={m} {kind}: route {b} {med[(kind, b)]:.1f} us | " + "; ".join(
            f"{t} {med[(kd, t)]:.1f} ({med[(kind, b)] / med[(kd, t)]:.3f}x)"
            for kd, t in med if kd == kind and t != b), flush=True)
    del qws
