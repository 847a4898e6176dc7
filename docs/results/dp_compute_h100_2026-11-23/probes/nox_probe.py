"""The rule kernel against w4g_nox (make_nox.py: no x loads, wrong numbers) in the EP8 cells
under DP attention, CUDA graphs of 10 calls, weights rotated over copies > 2x L2 and with one
copy in L2, medians of 3 uniform routings."""
import os, statistics, sys, torch
sys.path.insert(0, os.path.dirname(__file__))
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_launch
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as rule_fn
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import w4g_nox
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
KERNELS = {"rule": rule_fn, "no x": w4g_nox.w4a16_grouped_gluon}
for label, m in (("W13 EP8", 64), ("W13 EP8", 128), ("W13 EP8", 256), ("W2 EP8", 64),
                 ("W2 EP8", 128), ("W2 EP8", 256)):
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, get_scheme("w4a16"))
    qws = [q0] + [w4a16_quantize(master + i, get_scheme("w4a16")) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    out = {}
    for s in range(3):
        counts = route(m, e, TOP_K, seed=s)
        rows = int(counts.sum())
        tiles = gluon_tiles(rows, e, n, k)
        launch = gluon_launch((rows, e, n, k), tiles)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        for name, fn in KERNELS.items():
            f = lambda q, fn=fn: fn(x, q, counts, *tiles, **launch)
            out.setdefault(name, []).append((graph_us([lambda q=q: f(q) for q in qws], calls=STEP_CALLS),
                                             graph_us([lambda: f(q0)], calls=STEP_CALLS)))
    print(f"== {label} M={m} tiles {tiles} {launch}", flush=True)
    for name, v in out.items():
        print(f"  {name:6s} rotated {statistics.median(a for a, _ in v):6.2f} us  "
              f"one copy in L2 {statistics.median(b for _, b in v):6.2f} us", flush=True)
    del qws
