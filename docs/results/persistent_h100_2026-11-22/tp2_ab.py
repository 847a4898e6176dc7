"""Round 12: TP2's persistent grid by batch (3 per SM puts 1.2 tiles on each program at M=16),
alternating 5 rounds, medians."""
import torch
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g
from qarl_kernels.w4a16_lanes import lane_codes

e, n, k = 128, 768, 2048
for m in (8, 16, 24, 32, 48, 64):
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    base = gluon_tiles(x.shape[0], e, n, k)
    cfgs = [base] + [c for c in [(8, 128, 3, None, None), (8, 128, 3, None, 3),
                                 (8, 128, 3, None, 4), (8, 64, 3, None, 5), (8, 64, 3, None, None)]
                     if c != base]
    want = g(x, qws[0], counts, *base).float()
    for c in cfgs:
        err = ((g(x, qws[0], counts, *c).float() - want).norm() / want.norm()).item()
        assert err < 1e-2, (c, err)
    times = {c: [] for c in cfgs}
    for _ in range(5):
        for c in cfgs:
            times[c].append(graph_us([lambda q=q, c=c: g(x, q, counts, *c) for q in qws],
                                     calls=STEP_CALLS))
    med = {c: sorted(v)[2] for c, v in times.items()}
    touched = int((counts > 0).sum())
    print(f"W13 TP2 M={m} ({touched} experts): route {base} {med[base]:.2f} us | " + "; ".join(
        f"{c} {med[c]:.2f} ({med[base] / med[c]:.3f}x)" for c in cfgs[1:]), flush=True)
    del qws
