"""Tile candidates over 4 routing seeds x uniform/skewed (8 routings), graphs of 10 calls:
mean, min, max per candidate; the first candidate is the rule's."""
import os
import statistics

import torch

from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
W2P = [(8, 128, 3, None, 3), (8, 128, 3, None, 4), (8, 64, 3, None, 5), (8, 64, 3, None, 4),
       (8, 128, 3, None, None), (8, 64, 4, None, 5), (8, 64, 3, None, 6)]
CASES = [("W2 E128", m, False, W2P) for m in (4, 8, 16)] + [
    ("W13 TP2", 8, False, [(8, 64, 3, None, 5), (8, 64, 3, None, 4), (8, 64, 3, None, 6),
                           (8, 128, 3, None, 3), (8, 64, 4, None, 5)]),
    ("W2 EP8", 256, False, [(128, 64, 2, None, None), (64, 64, 2, None, None),
                            (128, 64, 2, None, 3), (64, 128, 2, None, None),
                            (64, 64, 3, None, None), (64, 128, 3, None, None)]),
    ("W13 TP2", 64, False, [(8, 128, 3, None, 3), (16, 64, 3, None, None),
                            (8, 64, 3, None, 5), (16, 128, 3, None, 3)]),
    ("W13 TP2", 64, True, [(8, 64, 2, 96, None), (8, 64, 3, None, None),
                           (16, 64, 3, None, None)]),
    ("W13 E128", 8, False, [(16, 128, 2, 96, None), (16, 128, 2, 96, 4), (8, 128, 3, None, 3)]),
]
if os.environ.get("SET") == "pe4":  # 2-4 tokens per expert: 8- or 16-token tiles
    CASES = [("W13 TP2", m, False, [(8, 128, 3, None, 3), (16, 128, 3, None, 3),
                                    (16, 64, 3, None, None)]) for m in (32, 48, 64)] + [
        ("W13 E128", m, False, [(8, 128, 3, None, None), (16, 128, 3, 128, None),
                                (16, 128, 3, None, 3)]) for m in (32, 48, 64)] + [
        ("W2 E128", m, False, [(8, 128, 3, None, 3), (16, 128, 3, None, 3)])
        for m in (32, 64)]
scheme = get_scheme("w4a16")
weights = {}
for label, m, sw, cands in CASES:
    e, n, k = SHAPES[label]
    if label not in weights:
        weights.clear()
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    qws = weights[label]
    res = {t: [] for t in cands}
    touched = []
    for seed in range(4):
        for skew in (0.0, 0.5):
            counts = route(m, e, TOP_K, seed=seed, skew=skew)
            touched.append(int((counts > 0).sum()))
            x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(x.shape[0], device="cuda")
            for t in cands:
                res[t].append(graph_us([lambda q=q, t=t: w4a16_grouped_gluon(
                    x, q, counts, *t, swiglu=sw, probs=probs if sw else None) for q in qws],
                    calls=STEP_CALLS))
    print(f"{label} M={m} {'fused' if sw else 'gemm'} touched {touched}", flush=True)
    for t, v in res.items():
        print(f"   {t}: mean {statistics.mean(v):.1f} min {min(v):.1f} max {max(v):.1f} | "
              + " ".join(f"{u:.1f}" for u in v), flush=True)
