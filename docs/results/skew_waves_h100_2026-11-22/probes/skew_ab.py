"""Alternating A/B of tile candidates under uniform and skewed routing (graphs of 10 calls),
5 rounds, medians. Each case: (shape, M, swiglu, [tiles, ...]); the first tiles are the rule's."""
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
P128 = (128, 128, 2, None, None)
CASES = [("W2 EP8", m, False, [P128, (64, 64, 3, None, None), (64, 128, 3, None, None)])
         for m in (96, 128, 160, 192, 224, 248)] + [
    ("W13 EP8", m, False, [(128, 64, 2, None, None), (64, 64, 3, None, None)])
    for m in (128, 192)] + [
    ("W13 E128", 64, False, [(16, 128, 3, 128, None)]),
    ("W13 E128", 48, False, [(16, 128, 3, 128, None)]),
    ("W13 E128", 64, True, [(16, 64, 3, 128, None)]),
    ("W13 TP2", 64, False, [(16, 64, 3, None, None), (8, 64, 3, None, 5)]),
    ("W13 TP2", 48, False, [(16, 64, 3, None, None)]),
    ("W13 TP2", 64, True, [(8, 64, 3, None, None), (16, 64, 3, None, None)]),
    ("W13 TP2", 32, True, [(8, 64, 3, None, None)]),
    ("W2 E128", 64, False, [(16, 128, 3, None, 3)]),
]
if os.environ.get("SET") == "boundary":  # session 11, call d: the EP8 rule's 128-token range
    CASES = [("W13 EP8", m, False, [(64, 64, 2, None, None), (128, 64, 2, None, None),
                                    (64, 64, 3, None, None), (128, 128, 2, None, None)])
             for m in (144, 160, 176, 208, 224, 240)] + [
        ("W2 EP8", m, False, [(64, 128, 3, None, None), (128, 128, 2, None, None),
                              (64, 64, 2, None, None)]) for m in (112, 120, 136, 144, 232, 240)]
scheme = get_scheme("w4a16")
weights = {}
for label, m, swiglu, alts in CASES:
    e, n, k = SHAPES[label]
    if label not in weights:
        weights.clear()
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    qws = weights[label]
    for skew in (0.0, 0.5):
        counts = route(m, e, TOP_K, skew=skew)
        rows = int(counts.sum())
        rule = (gluon_swiglu_tiles(rows, e, n, k) + (None, )) if swiglu else \
            gluon_tiles(rows, e, n, k)
        cands = [rule] + [t for t in alts if t != rule]
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(rows, device="cuda")
        want = scheme.reference_grouped_matmul(x, qws[0], counts.cpu()).float()
        fns = []
        for t in cands:
            def run(q, t=t):
                return w4a16_grouped_gluon(x, q, counts, *t, swiglu=swiglu,
                                           probs=probs if swiglu else None)
            if not swiglu:
                y = run(qws[0]).float()
                assert float((y - want).norm() / want.norm()) < 1e-2, (label, m, t)
            fns.append([lambda q=q, run=run: run(q) for q in qws])
        times = [[] for _ in cands]
        for _ in range(5):
            for i, f in enumerate(fns):
                times[i].append(graph_us(f, calls=STEP_CALLS))
        med = [statistics.median(t) for t in times]
        print(f"{label} {'fused' if swiglu else 'gemm'} M={m} skew {skew} max/mean "
              f"{int(counts.max())}/{rows / e:.1f}: " + "; ".join(
                  f"{t} {u:.1f} ({med[0] / u:.2f}x)" for t, u in zip(cands, med)), flush=True)
