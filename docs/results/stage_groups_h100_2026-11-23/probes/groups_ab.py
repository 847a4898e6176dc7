"""Two scale groups per ring stage (groups=2: 256 inputs a stage, half the barrier waits,
refills and TMA issues per input) against the rule's one, with the rule's tiles (and one stage
fewer), at every decode row: 3 uniform routings, 2 skewed (0.5); graphs of 10 calls; bits of
groups=2 against groups=1. GEMM and the fused fc1 + SwiGLU (W13 shapes)."""
import os, statistics, sys, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import (gluon_tiles, gluon_swiglu_tiles, gluon_x_async, gluon_tail,
                                     gluon_pdl)
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
peak = ceilings()
scheme = get_scheme("w4a16")
MS = [int(v) for v in os.environ.get("MS", "1,8,16,32,64,128,256").split(",")]
LABELS = os.environ.get("LABELS", "W13 EP8,W2 EP8,W13 E128,W2 E128,TP2").split(",")
FUSED = int(os.environ.get("FUSED", "1"))
bad = 0
summary = []
for label, e, n, k in DECODE_SHAPES:
    if label not in LABELS:
        continue
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for swiglu in ([False, True] if FUSED and label.startswith(("W13", "TP2")) else [False]):
        for m in MS:
            rows = m * TOP_K
            shape = (rows, e, n, k)
            tiles = gluon_swiglu_tiles(*shape) + (None,) if swiglu else gluon_tiles(*shape)
            if not tiles:
                continue
            kw = dict(x_async=gluon_x_async(*shape, swiglu=swiglu), pdl=gluon_pdl(rows),
                      tail=gluon_tail(*shape, swiglu=swiglu), swiglu=swiglu)
            bm, bn, st, cap, cps = tiles
            variants = {"g1": (tiles, 1), "g2": (tiles, 2)}
            if st > 2:
                variants["g2 st-1"] = ((bm, bn, st - 1, cap, cps), 2)
            routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(3)]
            routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
            res = {v: {} for v in variants}
            for name, counts in routings:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                base = w4a16_grouped_gluon(x, q0, counts, *tiles, groups=1, **kw)
                for v, (t, g) in variants.items():
                    try:
                        y = w4a16_grouped_gluon(x, q0, counts, *t, groups=g, **kw)
                    except Exception as err:
                        print(label, m, v, "failed:", str(err).splitlines()[0][:200], flush=True)
                        res[v][name] = (float("nan"), "X")
                        continue
                    same = torch.equal(y, base)
                    bad += not same
                    res[v][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(
                        x, q, counts, *t, groups=g, **kw) for q in qws], calls=STEP_CALLS),
                        "" if same else "!")
            nb = _expert_bytes(e, n, k, 128, rows, True)
            print(f"== {label}{' fused' if swiglu else ''} M={m} tiles {tiles} {kw}", flush=True)
            u1 = statistics.median(res["g1"][f"u{s}"][0] for s in range(3))
            for v, d in res.items():
                u = statistics.median(d[f"u{s}"][0] for s in range(3))
                sk = statistics.median(d[f"s{s}"][0] for s in range(2))
                print(f"  {v:8s} uniform {u:6.1f} us ({u1 / u:4.2f}x) skewed {sk:6.1f} | "
                      + " ".join(f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
print("bits differ in", bad, "cases")
