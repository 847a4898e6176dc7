"""x by cp.async of the tile's own token rows (x_async) against x by TMA boxes, the rule's
tiles, 4 seeds x uniform/skewed routing (8 routings), graphs of 10 calls: mean, min, max (us)
and whether the outputs are the same bits."""
import os
import statistics

import torch

from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_swiglu_tiles, gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
CASES = [(lab, 1, False) for lab in ("W13 E128", "W13 EP8", "W2 EP8")] + [
    ("W13 EP8", 16, True), ("W2 EP8", 16, False)] + [("W13 TP2", m, False) for m in (1, 8, 16, 64)] + [
    ("W2 E128", m, False) for m in (1, 4, 8, 16, 64)] + [
    ("W13 E128", m, False) for m in (8, 64)] + [
    ("W13 EP8", m, False) for m in (8, 16, 64, 128)] + [
    ("W2 EP8", m, False) for m in (8, 64)] + [
    ("W13 EP8", 8, True), ("W13 TP2", 8, True), ("W13 E128", 8, True), ("W13 EP8", 64, True)]
if os.environ.get("SET"):
    CASES = [c for c in CASES if f"{c[0]} {c[1]}" in os.environ["SET"].split(",")]
scheme = get_scheme("w4a16")
weights = {}
for label, m, sw in CASES:
    e, n, k = SHAPES[label]
    if label not in weights:
        weights.clear()
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    qws = weights[label]
    tiles = (gluon_swiglu_tiles(m * TOP_K, e, n, k) + (None, )) if sw else gluon_tiles(
        m * TOP_K, e, n, k)
    res = {False: [], True: []}
    same = True
    for seed in range(4):
        for skew in (0.0, 0.5):
            counts = route(m, e, TOP_K, seed=seed, skew=skew)
            x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(x.shape[0], device="cuda") if sw else None
            outs = [w4a16_grouped_gluon(x, qws[0], counts, *tiles, swiglu=sw, probs=probs,
                                        x_async=a) for a in (False, True)]
            same &= torch.equal(*outs)
            for a in ((True, False) if os.environ.get("ORDER") == "ba" else (False, True)):
                res[a].append(graph_us([lambda q=q, a=a: w4a16_grouped_gluon(
                    x, q, counts, *tiles, swiglu=sw, probs=probs, x_async=a) for q in qws],
                    calls=STEP_CALLS))
    line = f"{label} M={m} {'fused' if sw else 'gemm'} {tiles} same bits {same}:"
    for a, v in res.items():
        line += (f" | {'cp.async' if a else 'TMA'} mean {statistics.mean(v):.1f} min {min(v):.1f}"
                 f" max {max(v):.1f}")
    ratio = [t / c for t, c in zip(res[False], res[True])]
    print(line + f" | TMA/cp.async {min(ratio):.2f}-{max(ratio):.2f}", flush=True)
