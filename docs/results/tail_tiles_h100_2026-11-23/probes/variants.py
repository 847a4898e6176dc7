"""Tail variants against the plain kernel (the rule's tiles): v1u (tail boxes always loaded,
a uniform branch per tile), v2pred (tail boxes only for tiles with a tail), v3always (v2's
loads, the tail wgmma on every tile, no branch). 4 uniform routings, 2 skewed, balanced."""
import shutil, statistics, sys, torch
for v in ("v1u", "v2pred", "v3always"):
    shutil.copy(f".gpu/r16/w4g_{v}.py", f"kernels/_w4g_{v}.py")
import importlib
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
MODS = {v: importlib.import_module(f"qarl_kernels._w4g_{v}") for v in ("v1u", "v2pred", "v3always")}
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
scheme = get_scheme("w4a16")
CASES = [("W13 EP8", 128, [(64, 64, 3, 16), (64, 64, 2, 16)]),
         ("W2 EP8", 128, [(64, 64, 2, 16), (64, 128, 2, 16)]),
         ("W13 EP8", 256, [(128, 64, 2, 16), (128, 64, 2, 32)]),
         ("W2 EP8", 256, [(128, 64, 2, 16), (128, 64, 2, 32)]),
         ("W13 EP8", 64, [(32, 64, 3, 16), (32, 64, 4, 16)])]
for label, m, cands in CASES:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rows = m * TOP_K
    rule = gluon_tiles(rows, e, n, k)
    routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(4)]
    routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
    routings.append(("bal", torch.full((e,), rows // e, dtype=torch.int32, device="cuda")))
    runs = [("rule " + str(rule[:3]), w4a16_grouped_gluon, rule[:5], 0)]
    runs += [(f"{v} {c[:3]} t{c[3]}", mod.w4a16_grouped_gluon, c[:3] + (None, None), c[3])
             for c in cands for v, mod in MODS.items()]
    res = {r[0]: {} for r in runs}
    for name, counts in routings:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        base = w4a16_grouped_gluon(x, q0, counts, *rule[:5])
        for rname, fn, tiles, tail in runs:
            y = fn(x, q0, counts, *tiles, tail=tail)
            flag = "" if torch.equal(y, base) else "!"
            res[rname][name] = (graph_us([lambda q=q: fn(x, q, counts, *tiles, tail=tail)
                                          for q in qws], calls=STEP_CALLS), flag)
    print(f"== {label} M={m}; busiest " + " ".join(f"{nm}:{int(c.max())}" for nm, c in routings), flush=True)
    for rname, d in res.items():
        u = statistics.median(d[f"u{s}"][0] for s in range(4))
        pct = _pct_copy(_expert_bytes(e, n, k, 128, rows, True), u, peak)
        print(f"  {rname:28s} uniform median {u:5.1f} us {pct:4.1f}% | " + " ".join(
            f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
