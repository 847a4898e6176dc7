"""PDL A/B: the rule's Gluon kernel as committed against the same kernel and tiles launched with
programmatic dependent launch (each CTA releases the next kernel at its start and waits for the
previous one before its first read of counts or x), with and without an L2 prefetch of its
first tile's words before the wait. 4 uniform routings (the bench's seeds), graphs of 10 calls
(and of 1); same bits checked. Then the MoE pair as decode runs it: fused fc1 + SwiGLU, then
W2, 5 pairs per graph."""
import os, statistics, sys
sys.path.insert(0, os.path.dirname(__file__))
import torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_x_async, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import _w4g_pdl as pdlk

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
print(f"copy {peak['copy_GBps']:.0f} GB/s", flush=True)
scheme = get_scheme("w4a16")
CASES = [(lab, m) for lab in ("W13 EP8", "W2 EP8") for m in (1, 8, 64, 128, 256)] + [
    (lab, m) for lab in ("W13 E128", "W2 E128", "W13 TP2") for m in (1, 8, 64, 128, 256)]
sel = os.environ.get("SET")
weights = {}
def weights_for(label):
    if label not in weights:
        weights.clear()
        e, n, k = SHAPES[label]
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    return weights[label]
for label, m in CASES:
    if sel and f"{label} {m}" not in sel.split(","):
        continue
    e, n, k = SHAPES[label]
    rule = gluon_tiles(m * TOP_K, e, n, k)
    if rule is None:
        continue
    xa = gluon_x_async(m * TOP_K, e, n, k)
    qws = weights_for(label)
    lines = k // 256
    variants = {"base": None, "pdl": (True, 0), "pdl, no trigger": (True, -1)}
    res = {v: [] for v in variants}
    one = {v: [] for v in variants}
    pct = {v: [] for v in variants}
    same = True
    for seed in range(4):
        counts = route(m, e, TOP_K, seed=seed)
        rows, touched = int(counts.sum()), int((counts > 0).sum())
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        fns = {}
        for v, opt in variants.items():
            if opt is None:
                fns[v] = lambda q: w4a16_grouped_gluon(x, q, counts, *rule, x_async=xa)
            else:
                fns[v] = lambda q, opt=opt: pdlk.w4a16_grouped_gluon(
                    x, q, counts, *rule, x_async=xa, pdl=opt[0], pf_lines=opt[1])
        ref = fns["base"](qws[0])
        for v, fn in fns.items():
            same &= torch.equal(fn(qws[0]), ref)
        for v, fn in fns.items():
            t = graph_us([lambda q=q, fn=fn: fn(q) for q in qws], calls=STEP_CALLS)
            res[v].append(t)
            one[v].append(graph_us([lambda q=q, fn=fn: fn(q) for q in qws]))
            pct[v].append(_pct_copy(_expert_bytes(touched, n, k, 128, rows, True), t, peak))
    b = statistics.median(res["base"])
    print(f"{label} M={m} {rule} xa {xa} same bits {same}: " + " | ".join(
        f"{v} {statistics.median(res[v]):.1f} us ({min(res[v]):.1f}-{max(res[v]):.1f}) "
        f"{statistics.median(pct[v]):.1f}% {b / statistics.median(res[v]):.3f}x, 1/graph "
        f"{statistics.median(one[v]):.1f}" for v in variants), flush=True)

# the MoE pair: fused fc1 + SwiGLU (W13) then W2, as the decode path calls them
for lab13, lab2 in (("W13 EP8", "W2 EP8"), ("W13 E128", "W2 E128")):
    if sel and "pair" not in sel:
        continue
    e, n13, k13 = SHAPES[lab13]
    _, n2, k2 = SHAPES[lab2]
    weights.clear()
    w13 = [w4a16_quantize(torch.randn(e, n13, k13, device="cuda"), scheme) for _ in range(3)]
    w2 = [w4a16_quantize(torch.randn(e, n2, k2, device="cuda"), scheme) for _ in range(3)]
    for m in (1, 8, 64, 128):
        rows_ = m * TOP_K
        t13 = gluon_swiglu_tiles(rows_, e, n13, k13)
        t2 = gluon_tiles(rows_, e, n2, k2)
        if t13 is None or t2 is None:
            continue
        xa13 = gluon_x_async(rows_, e, n13, k13, swiglu=True)
        xa2 = gluon_x_async(rows_, e, n2, k2)
        out = {}
        for mode in ("base", "pdl", "pdl-nt"):
            ts = []
            for seed in range(4):
                counts = route(m, e, TOP_K, seed=seed)
                rows = int(counts.sum())
                x = torch.randn(rows, k13, device="cuda", dtype=torch.bfloat16)
                probs = torch.rand(rows, device="cuda")
                def pair(i, mode=mode, x=x, counts=counts, probs=probs):
                    if mode == "base":
                        h = w4a16_grouped_gluon(x, w13[i], counts, *t13, None, swiglu=True,
                                                probs=probs, x_async=xa13)
                        return w4a16_grouped_gluon(h, w2[i], counts, *t2, x_async=xa2)
                    pf = -1 if mode == "pdl-nt" else 0
                    h = pdlk.w4a16_grouped_gluon(x, w13[i], counts, *t13, None, swiglu=True,
                                                 probs=probs, x_async=xa13, pdl=True,
                                                 pf_lines=pf)
                    return pdlk.w4a16_grouped_gluon(h, w2[i], counts, *t2, x_async=xa2,
                                                    pdl=True, pf_lines=pf)
                if mode != "base":
                    assert torch.equal(pair(0), pair(0, "base")), (lab13, m, mode)
                ts.append(graph_us([lambda i=i: pair(i) for i in range(3)], calls=5))
            out[mode] = statistics.median(ts)
        print(f"pair {lab13}+{lab2} M={m}: " + " | ".join(
            f"{k_} {v:.1f} us/pair ({out['base'] / v:.3f}x)" for k_, v in out.items()), flush=True)
