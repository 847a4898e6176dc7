"""Tiles, groups and the early release (launch_dependents once a program's last load is
issued) at the rows given: 3 uniform and 2 skewed routings (EP8 beside TP attention: routed
over 128 experts, this rank's 16), graphs of 10 calls, bits against the rule's."""
import os, statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import (gluon_tiles, gluon_swiglu_tiles, gluon_x_async, gluon_tail,
                                     gluon_pdl, gluon_groups, gluon_release,
                                     gluon_early_words, gluon_refill_first)
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
# (label, M, swiglu, [(tiles5, groups, release[, tail[, early_words[, refill_first[, warps]]]])]); ("rule",
# release[, tail[, early_words[, refill_first]]]): the rule's tiles and groups. warps: the
# eight-warp build (probes/eight_warps.patch applied). The first line is the rule as w4a16_gemm
# gives it, release and early words included.
CASES = eval(os.environ["CASES"])
SKEWED = int(os.environ.get("SKEWED", 2))  # skewed routings (seeds 0..SKEWED-1); the bench's: 4
bad = 0
for label, m, swiglu, cands in CASES:
    e, n, k = SHAPES[label]
    routed = ROUTED_EXPERTS.get(label)
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    kw0 = dict(routed=routed or e, local=e if routed else None)
    routings = [(f"u{s}", route(m, kw0["routed"], TOP_K, seed=s, local=kw0["local"])) for s in range(3)]
    routings += [(f"s{s}", route(m, kw0["routed"], TOP_K, seed=s, skew=0.5, local=kw0["local"]))
                 for s in range(SKEWED)]
    rows0 = int(routings[0][1].sum())
    shape = (rows0, e, n, k)
    rule = gluon_swiglu_tiles(*shape) if swiglu else gluon_tiles(*shape)
    g0 = gluon_groups(*shape, swiglu=swiglu)
    r0 = gluon_release(rows0, e, rule[4])
    e0 = gluon_early_words(rows0, e, k, rule, gluon_tail(*shape, swiglu=swiglu))
    f0 = gluon_refill_first(rule, g0)
    cands = [(rule, g0, r0, None, e0, f0)] + [(rule, g0) + tuple(c[1:]) if c[0] == "rule" else tuple(c)
                                for c in cands]
    res = {c: {} for c in cands}
    for name, counts in routings:
        rows = int(counts.sum())
        shape = (rows, e, n, k)
        kw = dict(pdl=gluon_pdl(rows), swiglu=swiglu, x_async=gluon_x_async(*shape, swiglu=swiglu),
                  tail=gluon_tail(*shape, swiglu=swiglu))
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        base = w4a16_grouped_gluon(x, q0, counts, *rule, groups=g0, **kw)
        for c in cands:
            t, g, rl = c[:3]
            kwc = dict(kw, tail=c[3]) if len(c) > 3 and c[3] is not None else dict(kw)
            if len(c) > 4:
                kwc["early_words"] = c[4]
            if len(c) > 5:
                kwc["refill_first"] = c[5]
            if len(c) > 6:
                kwc["warps"] = c[6]
            try:
                y = w4a16_grouped_gluon(x, q0, counts, *t, groups=g, release=rl, **kwc)
            except Exception as err:
                print(label, m, c, "failed:", str(err).splitlines()[0][:200], flush=True)
                res[c][name] = (float("nan"), "X")
                continue
            same = torch.equal(y, base)
            bad += not same
            res[c][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(
                x, q, counts, *t, groups=g, release=rl, **kwc) for q in qws], calls=STEP_CALLS),
                "" if same else "!")
    print(f"== {label}{' fused' if swiglu else ''} M={m} rows~{rows0}", flush=True)
    u1 = statistics.median(res[cands[0]][f"u{s}"][0] for s in range(3))
    for c, d in res.items():
        u = statistics.median(d[f"u{s}"][0] for s in range(3))
        sk = statistics.median(d[f"s{s}"][0] for s in range(SKEWED))
        print(f"  {str(c):44s} uniform {u:6.1f} us ({u1 / u:4.2f}x) skewed {sk:6.1f} | "
              + " ".join(f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
print("bits differ in", bad, "cases")
