"""W13 EP8 at 64-120 tokens per expert over 4 seeds x uniform/skewed routing: the fused fc1's
tiles (M=136-224), and the GEMM's 128-token tiles against (64, 128, 3) near the wave edge
(M=232, 240)."""
import statistics

import torch

from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

FUSED = [(32, 64, 3, 128, None), (32, 64, 2, 96, None), (64, 64, 3, None, None),
         (128, 64, 2, None, None), (64, 64, 2, None, None)]
GEMM = [(128, 128, 2, None, None), (64, 128, 3, None, None)]
CASES = [(m, "fused", FUSED) for m in (136, 160, 192, 224)] + [
    (m, "gemm", GEMM) for m in (232, 240)]
scheme = get_scheme("w4a16")
e, n, k = 16, 1536, 2048
master = torch.randn(e, n, k, device="cuda")
q0 = w4a16_quantize(master, scheme)
qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
    1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
for m, kind, cands in CASES:
    res = {t: [] for t in cands}
    sw = kind == "fused"
    for seed in range(4):
        for skew in (0.0, 0.5):
            counts = route(m, e, TOP_K, seed=seed, skew=skew)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(rows, device="cuda")
            for t in cands:
                res[t].append(graph_us([lambda q=q, t=t: w4a16_grouped_gluon(
                    x, q, counts, *t, swiglu=sw, probs=probs if sw else None) for q in qws],
                    calls=STEP_CALLS))
            print(f"M={m} {kind} seed {seed} skew {skew} max {int(counts.max())} row tiles/128 "
                  f"{int(((counts + 127) // 128).sum())}: "
                  + "; ".join(f"{t} {v[-1]:.1f}" for t, v in res.items()), flush=True)
    for t, v in res.items():
        print(f"M={m} {kind} {t}: mean {statistics.mean(v):.1f} min {min(v):.1f} "
              f"max {max(v):.1f} us", flush=True)
