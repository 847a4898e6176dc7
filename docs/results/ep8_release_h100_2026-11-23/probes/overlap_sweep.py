"""The rule's tiles with and without the next-kernel overlap (release: launch_dependents once a
program's last load is issued; prefetch: the guessed first tile's words into L2 before
griddepcontrol.wait): 3 uniform and 2 skewed routings, graphs of 10 calls, bits against the
plain launch."""
import os, statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import (gluon_tiles, gluon_swiglu_tiles, gluon_x_async, gluon_tail,
                                     gluon_pdl, gluon_groups)
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
CASES = eval(os.environ["CASES"])  # (label, M, swiglu)
VARIANTS = eval(os.environ.get("VARIANTS", "[(False, False), (False, True), (True, True), (True, False)]"))
bad = 0
for label, m, swiglu in CASES:
    e, n, k = SHAPES[label]
    routed = ROUTED_EXPERTS.get(label)
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    routings = [(f"u{s}", route(m, routed or e, TOP_K, seed=s, local=e if routed else None)) for s in range(3)]
    routings += [(f"s{s}", route(m, routed or e, TOP_K, seed=s, skew=0.5, local=e if routed else None)) for s in range(2)]
    res = {v: {} for v in VARIANTS}
    for name, counts in routings:
        rows = int(counts.sum())
        shape = (rows, e, n, k)
        rule = gluon_swiglu_tiles(*shape) if swiglu else gluon_tiles(*shape)
        kw = dict(pdl=gluon_pdl(rows), swiglu=swiglu, groups=gluon_groups(*shape, swiglu=swiglu),
                  x_async=gluon_x_async(*shape, swiglu=swiglu), tail=gluon_tail(*shape, swiglu=swiglu))
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        base = w4a16_grouped_gluon(x, q0, counts, *rule, **kw)
        for v in VARIANTS:
            pf, rl = v
            y = w4a16_grouped_gluon(x, q0, counts, *rule, prefetch=pf, release=rl, **kw)
            same = torch.equal(y, base)
            bad += not same
            res[v][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(
                x, q, counts, *rule, prefetch=pf, release=rl, **kw) for q in qws],
                calls=STEP_CALLS), "" if same else "!")
    print(f"== {label}{' fused' if swiglu else ''} M={m} rule {rule} {kw}", flush=True)
    u1 = statistics.median(res[VARIANTS[0]][f"u{s}"][0] for s in range(3))
    for v, d in res.items():
        u = statistics.median(d[f"u{s}"][0] for s in range(3))
        sk = statistics.median(d[f"s{s}"][0] for s in range(2))
        print(f"  prefetch={v[0]!s:5} release={v[1]!s:5} uniform {u:6.1f} us ({u1 / u:4.2f}x) skewed {sk:6.1f} | "
              + " ".join(f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
print("bits differ in", bad, "cases")
