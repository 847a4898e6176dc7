"""Round 12: where 8-token x tiles stop paying: 1-8 tokens per expert, 8- and 16-token tiles
with and without a persistent grid, against the route. 10 calls per graph."""
import itertools
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes

CASES = [("W13 E128", 128, 1536, 2048, m) for m in (16, 32, 64)] + [
    ("W2 E128", 128, 2048, 768, m) for m in (16, 32, 64)] + [
    ("W13 TP2", 128, 768, 2048, m) for m in (16, 32, 64)] + [
    ("W13 EP8", 16, 1536, 2048, m) for m in (8, 16, 32)] + [
    ("W2 EP8", 16, 2048, 768, m) for m in (8, 16, 32)]
for label, e, n, k, m in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    probs = torch.rand(x.shape[0], device="cuda")
    base = gluon_tiles(x.shape[0], e, n, k)
    want = g(x, qws[0], counts, *base).float()
    t_base = graph_us([lambda q=q: g(x, q, counts, *base) for q in qws], calls=STEP_CALLS)
    res = []
    for bm, bn, st, reg, p in itertools.product((8, 16), (64, 128), (3, 4), (None, 128),
                                                (None, 3)):
        if reg is not None and bn == 64:
            continue
        c = (bm, bn, st, reg, p)
        try:
            y = g(x, qws[0], counts, *c).float()
        except Exception as ex:
            continue
        err = ((y - want).norm() / want.norm()).item()
        t = graph_us([lambda q=q: g(x, q, counts, *c) for q in qws], calls=STEP_CALLS)
        res.append((t, c, err))
    res.sort()
    best8 = min(r for r in res if r[1][0] == 8)
    print(f"{label} M={m}: route {base} {t_base:.1f} us | " + "; ".join(
        f"{c} {t:.1f} ({t_base / t:.3f}x){'' if err < 1e-2 else ' WRONG'}"
        for t, c, err in res[:3]) + f" | best 8-token {best8[1]} {best8[0]:.1f}", flush=True)
    if label.startswith("W13"):
        fb = (base[0], *gluon_swiglu_tiles(base[0]), base[3])
        t_fb = graph_us([lambda q=q: g(x, q, counts, *fb, swiglu=True, probs=probs) for q in qws],
                        calls=STEP_CALLS)
        fres = []
        for bm, st, reg in itertools.product((8, 16), (3, 4), (None, 128)):
            c = (bm, 64, st, reg)
            t = graph_us([lambda q=q: g(x, q, counts, *c, swiglu=True, probs=probs) for q in qws],
                         calls=STEP_CALLS)
            fres.append((t, c))
        fres.sort()
        print(f"  fused: route {fb} {t_fb:.1f} us | " + "; ".join(
            f"{c} {t:.1f} ({t_fb / t:.3f}x)" for t, c in fres[:3]), flush=True)
    del qws
