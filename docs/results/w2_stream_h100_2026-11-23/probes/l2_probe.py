"""Compute-bound or memory-bound: W2 EP8 graph times with weights rotated over copies > 2x L2
(the bench's protocol) against one weight copy that stays in L2 (12.6 MB of 50 MB)."""
import os, statistics, sys, torch
sys.path.insert(0, os.path.dirname(__file__))
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_launch
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from stream_modes import w4a16_grouped_stream
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
for label, m in (("W2 EP8, TP attention", 64), ("W2 EP8, TP attention", 128), ("W2 EP8, TP attention", 256), ("W2 EP8", 64),
                 ("W13 EP8, TP attention", 64), ("W13 EP8, TP attention", 256)):
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    routed = ROUTED_EXPERTS.get(label)
    out = {}
    for s in range(3):
        counts = route(m, routed or e, TOP_K, seed=s, local=e if routed else None)
        rows = int(counts.sum())
        shape = (rows, e, n, k)
        rule = gluon_tiles(*shape)
        launch = gluon_launch(shape, rule)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        fns = {"rule": lambda q: w4a16_grouped_gluon(x, q, counts, *rule, **launch)}
        if k == 768:
            bm = 32 if rows > 8 * e else 16
            fns["stream8w"] = lambda q: w4a16_grouped_stream(x, q, counts, bm, 128, 3, 2, 1, 8)
            fns["stream8w_memonly"] = lambda q: w4a16_grouped_stream(x, q, counts, bm, 128, 3, 2, 1, 8, 1)
        for name, f in fns.items():
            hbm = graph_us([lambda q=q: f(q) for q in qws], calls=STEP_CALLS)
            l2 = graph_us([lambda: f(q0)], calls=STEP_CALLS)
            out.setdefault(name, []).append((hbm, l2))
    print(f"== {label} M={m} rule {rule}", flush=True)
    for name, v in out.items():
        print(f"  {name:18s} rotated {statistics.median(a for a, _ in v):6.2f} us  L2-resident {statistics.median(b for _, b in v):6.2f} us", flush=True)
    del qws
