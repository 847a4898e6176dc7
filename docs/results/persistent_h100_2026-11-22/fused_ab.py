"""Round 12: the fused fc1 + SwiGLU's token tile, apart from the GEMM's (which it takes now);
and TP2 M=8's persistent grid size. Alternating 3 rounds of graphs of 10 calls; medians."""
import itertools
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes


def medians(cfgs, fn, rounds=3):
    times = {c: [] for c in cfgs}
    for _ in range(rounds):
        for c in cfgs:
            times[c].append(graph_us([lambda q=q: fn(q, c) for q in qws], calls=STEP_CALLS))
    return {c: sorted(v)[len(v) // 2] for c, v in times.items()}


for label, e, n, k, m in [("W13 EP8", 16, 1536, 2048, m) for m in (16, 32, 64, 128)] + [
        ("W13 E128", 128, 1536, 2048, m) for m in (128, 256)] + [
        ("W13 TP2", 128, 768, 2048, m) for m in (16, 128, 256)]:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    probs = torch.rand(x.shape[0], device="cuda")
    base = gluon_swiglu_tiles(gluon_tiles(x.shape[0], e, n, k))
    want = g(x, qws[0], counts, *base, swiglu=True, probs=probs)
    cfgs = [base] + [c for c in itertools.product((8, 16, 32, 64), (64, ), (3, 4), (None, 128))
                     if c != base]
    for c in cfgs:
        y = g(x, qws[0], counts, *c, swiglu=True, probs=probs).float()
        err = ((y - want.float()).norm() / want.float().norm()).item()
        if not err < 1e-2:
            print(f"WRONG {label} M={m} {c}: {err}")
    med = medians(cfgs, lambda q, c: g(x, q, counts, *c, swiglu=True, probs=probs))
    best = sorted(cfgs, key=med.get)[:4]
    print(f"fused {label} M={m}: route {base} {med[base]:.1f} us | " + "; ".join(
        f"{c} {med[c]:.1f} ({med[base] / med[c]:.3f}x)" for c in best), flush=True)
    del qws

# TP2 M=8 GEMM: persistent grid sizes with 64-row weight tiles
e, n, k = 128, 768, 2048
counts = route(8, e, 8)
qws = _rotated_w4a16(e, n, k)
for q in qws:
    lane_codes(q)
x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
base = gluon_tiles(x.shape[0], e, n, k)
cfgs = [base] + [(8, 64, st, None, p) for st in (3, 4) for p in (None, 3, 4, 5, 6, 7)]
med = medians(cfgs, lambda q, c: g(x, q, counts, *c), rounds=5)
print(f"GEMM W13 TP2 M=8: route {base} {med[base]:.2f} us | " + "; ".join(
    f"{c} {med[c]:.2f} ({med[base] / med[c]:.3f}x)" for c in sorted(cfgs, key=med.get)[:6]))
