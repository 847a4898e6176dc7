"""Stream-K against the rule's tiles over 4 seeds x uniform/skewed routing (8 routings), graphs
of 10 calls: mean, min, max per candidate (us), and each stream-K output against the rule's
(max abs difference / max abs value). Candidates: (block_m, block_n, stages, cap, per SM, sk)."""
import os
import statistics

import torch

from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
SK = True
CASES = [("W2 E128", m, [(8, 128, 3, None, 3, SK), (8, 128, 3, None, 2, SK),
                         (8, 128, 4, None, 3, SK), (8, 64, 3, None, 4, SK)]) for m in (4, 8, 16)]
CASES += [("W13 TP2", m, [(8, 64, 3, None, 4, SK), (8, 64, 4, None, 4, SK),
                          (8, 64, 3, None, 3, SK), (8, 128, 3, None, 3, SK)]) for m in (8, 16)]
CASES += [("W13 E128", 8, [(8, 128, 3, None, 3, SK), (16, 128, 3, None, 3, SK),
                           (8, 64, 3, None, 4, SK)])]
CASES += [("W13 EP8", 8, [(8, 64, 4, None, 4, SK), (8, 64, 4, None, 3, SK),
                          (8, 128, 4, None, 3, SK), (8, 128, 4, None, 2, SK)]),
          ("W2 EP8", 8, [(8, 128, 4, None, 3, SK), (8, 64, 4, None, 4, SK),
                         (8, 128, 3, None, 2, SK)])]
CASES += [(lab, m, [(64, 128, 3, None, 2, SK), (64, 64, 3, None, 3, SK),
                    (32, 64, 3, None, 3, SK)])
          for lab in ("W13 EP8", "W2 EP8") for m in (64, 128, 256)]
if os.environ.get("SET"):
    CASES = [c for c in CASES if c[0] + " " + str(c[1]) in os.environ["SET"].split(",")]
scheme = get_scheme("w4a16")
weights = {}
for label, m, cands in CASES:
    e, n, k = SHAPES[label]
    if label not in weights:
        weights.clear()
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    qws = weights[label]
    rule = gluon_tiles(m * TOP_K, e, n, k)
    cands = [rule + (False, )] + cands
    res = {t: [] for t in cands}
    diff = {t: 0.0 for t in cands}
    touched = []
    for seed in range(4):
        for skew in (0.0, 0.5):
            counts = route(m, e, TOP_K, seed=seed, skew=skew)
            touched.append(int((counts > 0).sum()))
            x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
            want = w4a16_grouped_gluon(x, qws[0], counts, *rule).float()
            for t in cands:
                got = w4a16_grouped_gluon(x, qws[0], counts, *t[:5], stream_k=t[5]).float()
                diff[t] = max(diff[t], ((got - want).abs().max() / want.abs().max()).item())
                res[t].append(graph_us([lambda q=q, t=t: w4a16_grouped_gluon(
                    x, q, counts, *t[:5], stream_k=t[5]) for q in qws], calls=STEP_CALLS))
    print(f"{label} M={m} touched {touched}", flush=True)
    for t, v in res.items():
        print(f"   {t}: mean {statistics.mean(v):.1f} min {min(v):.1f} max {max(v):.1f} "
              f"diff {diff[t]:.1e} | " + " ".join(f"{u:.1f}" for u in v), flush=True)
