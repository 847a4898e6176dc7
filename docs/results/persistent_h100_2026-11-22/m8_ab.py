"""Round 12: 8-token x tiles (wgmma n=8, half the x bytes per K block) at decode sizes of at most
a few tokens per expert, against the route. 10 calls per graph; rel err against the route."""
import itertools, sys
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes

SHAPES = [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768), ("W13 EP8", 16, 1536, 2048),
          ("W2 EP8", 16, 2048, 768), ("W13 TP2", 128, 768, 2048)]
for (label, e, n, k), m in itertools.product(SHAPES, (1, 8, 16)):
    if m == 16 and e == 16:
        continue
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
    for bn, st, reg, p in itertools.product((64, 128), (2, 3, 4), (None, 96, 128), (None, 3)):
        if reg is not None and bn == 64:
            continue
        c = (8, bn, st, reg, p)
        try:
            y = g(x, qws[0], counts, *c).float()
        except Exception as ex:
            print(f"  {c}: {type(ex).__name__} {str(ex)[:80]}", flush=True)
            continue
        err = ((y - want).norm() / want.norm()).item()
        t = graph_us([lambda q=q: g(x, q, counts, *c) for q in qws], calls=STEP_CALLS)
        res.append((t, c, err))
    res.sort()
    print(f"{label} M={m}: route {base} {t_base:.1f} us | " + "; ".join(
        f"{c[1:]} {t:.1f} ({t_base / t:.3f}x){'' if err < 1e-2 else ' WRONG'}"
        for t, c, err in res[:4]), flush=True)
    if label.startswith("W13"):
        fb = (base[0], *gluon_swiglu_tiles(base[0]), base[3])
        t_fb = graph_us([lambda q=q: g(x, q, counts, *fb, swiglu=True, probs=probs) for q in qws],
                        calls=STEP_CALLS)
        want_f = g(x, qws[0], counts, *fb, swiglu=True, probs=probs).float()
        fres = []
        for st, reg in itertools.product((2, 3, 4), (None, 96, 128)):
            c = (8, 64, st, reg)
            y = g(x, qws[0], counts, *c, swiglu=True, probs=probs).float()
            err = ((y - want_f).norm() / want_f.norm()).item()
            t = graph_us([lambda q=q: g(x, q, counts, *c, swiglu=True, probs=probs) for q in qws],
                         calls=STEP_CALLS)
            fres.append((t, c, err))
        fres.sort()
        print(f"  fused: route {fb} {t_fb:.1f} us | " + "; ".join(
            f"{c[1:]} {t:.1f} ({t_fb / t:.3f}x){'' if err < 1e-2 else ' WRONG'}"
            for t, c, err in fres[:3]), flush=True)
    del qws
