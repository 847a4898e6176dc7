"""Tiles, stages and persistent programs for groups=2 at the rows where it won (EP8 up to 16
tokens per expert): 3 uniform and 2 skewed routings, graphs of 10 calls, bits against the
rule's tiles and groups."""
import os, statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import (gluon_tiles, gluon_swiglu_tiles, gluon_x_async, gluon_tail,
                                     gluon_pdl, gluon_groups)
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
peak = ceilings()
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
# (label, M, swiglu, [(tiles, groups, x_async or None for the rule's[, tail])])
CASES = eval(os.environ["CASES"])
bad = 0
for label, m, swiglu, cands in CASES:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rows = m * TOP_K
    shape = (rows, e, n, k)
    rule = gluon_swiglu_tiles(*shape) if swiglu else gluon_tiles(*shape)
    kw = dict(pdl=gluon_pdl(rows), swiglu=swiglu)
    xa = gluon_x_async(*shape, swiglu=swiglu)
    g0 = gluon_groups(*shape, swiglu=swiglu)
    t0 = gluon_tail(*shape, swiglu=swiglu)
    cands = [(rule, g0, xa, t0)] + [(c[0], c[1], xa if c[2] is None else c[2],
                                     c[3] if len(c) > 3 else t0) for c in cands]
    routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(3)]
    routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
    res = {c: {} for c in cands}
    for name, counts in routings:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        base = w4a16_grouped_gluon(x, q0, counts, *rule, groups=g0, x_async=xa, tail=t0, **kw)
        for c in cands:
            t, g, a, tl = c
            try:
                y = w4a16_grouped_gluon(x, q0, counts, *t, groups=g, x_async=a, tail=tl, **kw)
            except Exception as err:
                print(label, m, c, "failed:", str(err).splitlines()[0][:200], flush=True)
                res[c][name] = (float("nan"), "X")
                continue
            same = torch.equal(y, base)
            bad += not same
            res[c][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(
                x, q, counts, *t, groups=g, x_async=a, tail=tl, **kw) for q in qws],
                calls=STEP_CALLS),
                "" if same else "!")
    touched = e  # every expert at EP8 from 8 tokens; E128 rows: the bench's count
    print(f"== {label}{' fused' if swiglu else ''} M={m} {kw}", flush=True)
    u1 = statistics.median(res[cands[0]][f"u{s}"][0] for s in range(3))
    for c, d in res.items():
        u = statistics.median(d[f"u{s}"][0] for s in range(3))
        sk = statistics.median(d[f"s{s}"][0] for s in range(2))
        print(f"  {str(c):40s} uniform {u:6.1f} us ({u1 / u:4.2f}x) skewed {sk:6.1f} | "
              + " ".join(f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
print("bits differ in", bad, "cases")
