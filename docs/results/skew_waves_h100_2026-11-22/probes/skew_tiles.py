"""Skewed routing: do the tile rules (which see only the row count) still pick well?
For each decode case under route(skew=S): the default tiles against the tiles the rules would
pick for 2-16x the rows (bigger token tiles, as the busiest experts want), GEMM and fused fc1.
Usage: python skew_tiles.py [SKEW]"""
import sys

import torch

from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_swiglu_tiles, gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

skew = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
TOKENS = [int(t) for t in sys.argv[3].split(",")] if len(sys.argv) > 3 else [8, 64, 128, 256]
# EP8 from 64 tokens per expert: tiles the rules give elsewhere
EXTRA = [(64, 64, 2, None, None), (64, 64, 3, None, None), (64, 128, 3, None, None),
         (128, 64, 2, None, None), (32, 64, 3, None, None), (64, 64, 3, None, 3),
         (128, 128, 2, None, None)]
EXTRA_SWIGLU = [(32, 64, 4, None, None), (64, 64, 2, None, None), (64, 64, 3, 128, None),
                (16, 64, 4, None, None)]
scheme = get_scheme("w4a16")
for label, e, n, k in [s for s in DECODE_SHAPES if only is None or s[0] in only]:
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme)
                  for i in range(1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for m in TOKENS:
        counts = route(m, e, TOP_K, skew=skew)
        rows = int(counts.sum())
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(rows, device="cuda")
        want = scheme.reference_grouped_matmul(x, q0, counts.cpu()).float()
        for swiglu in (False, True) if label.startswith("W13") else (False, ):
            cands = []
            for f in (1, 0.25, 0.5, 2, 4, 8):
                r = int(rows * f)
                try:
                    t = (gluon_swiglu_tiles(r, e, n, k) + (None, )) if swiglu else \
                        gluon_tiles(r, e, n, k)
                except TypeError:  # past the Gluon range
                    t = None
                if t is not None and t not in cands:
                    cands.append(t)
            extra = EXTRA_SWIGLU if swiglu else EXTRA
            cands += [t for t in extra if e < 64 and rows >= 64 * e and t not in cands]
            res = []
            for t in cands:
                def run(q, t=t):
                    return w4a16_grouped_gluon(x, q, counts, *t, swiglu=swiglu,
                                               probs=probs if swiglu else None)
                y = run(q0)
                if not swiglu:
                    err = float((y.float() - want).norm() / want.norm())
                    assert err < 1e-2, (label, m, t, err)
                res.append((graph_us([lambda q=q: run(q) for q in qws], calls=STEP_CALLS), t))
            base = res[0]
            best = min(res)
            print(f"{label} {'fused' if swiglu else 'gemm '} M={m} max/mean "
                  f"{int(counts.max())}/{rows / e:.1f} touched {int((counts > 0).sum())}: "
                  f"default {base[1]} {base[0]:.1f} us; best {best[1]} {best[0]:.1f} us "
                  f"({base[0] / best[0]:.2f}x) | " + "; ".join(f"{t} {u:.1f}" for u, t in res),
                  flush=True)
    del qws
