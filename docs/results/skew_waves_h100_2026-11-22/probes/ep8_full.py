"""W13 EP8 at 124-128 tokens per expert (M=248, 256) over 4 seeds x uniform/skewed routing:
GEMM and fused fc1 tiles whose time does not hinge on the row-tile count crossing a wave."""
import statistics

import torch

from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

GEMM = [(128, 128, 2, None, None), (64, 128, 3, None, None), (128, 64, 2, None, 3),
        (64, 64, 3, None, None), (64, 128, 2, None, None)]
FUSED = [(128, 64, 2, None, None), (64, 64, 2, None, None), (64, 64, 3, None, None),
         (32, 64, 3, 128, None), (64, 64, 3, 128, None)]
scheme = get_scheme("w4a16")
e, n, k = 16, 1536, 2048
master = torch.randn(e, n, k, device="cuda")
q0 = w4a16_quantize(master, scheme)
qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
    1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
for m in (248, 256):
    res = {("gemm", t): [] for t in GEMM} | {("fused", t): [] for t in FUSED}
    for seed in range(4):
        for skew in (0.0, 0.5):
            counts = route(m, e, TOP_K, seed=seed, skew=skew)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(rows, device="cuda")
            line = []
            for kind, t in res:
                sw = kind == "fused"
                us = graph_us([lambda q=q, t=t, sw=sw: w4a16_grouped_gluon(
                    x, q, counts, *t, swiglu=sw, probs=probs if sw else None) for q in qws],
                    calls=STEP_CALLS)
                res[(kind, t)].append(us)
                line.append(f"{kind} {t[:3]}{'' if t[4] is None else ' p%d' % t[4]}"
                            f"{'' if t[3] is None else ' r%d' % t[3]} {us:.1f}")
            print(f"M={m} seed {seed} skew {skew} row tiles/128 "
                  f"{int(((counts + 127) // 128).sum())}: " + "; ".join(line), flush=True)
    for (kind, t), v in res.items():
        print(f"M={m} {kind} {t}: mean {statistics.mean(v):.1f} min {min(v):.1f} "
              f"max {max(v):.1f} us", flush=True)
