"""Fewer CTA barriers per K block: the committed kernel (one ring allocation, one mbarrier per
stage) against _w4g_exp (an mbarrier per load: words, x half 0, x half 1) and _w4g_unroll (also
every stage its own allocations and the K loop unrolled by stage, so the compiler's barrier
analysis tells the stages apart). 10 calls per graph, bits compared with the committed kernel."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as base
from qarl_kernels.w4a16_lanes import lane_codes
import importlib

# modules named on the command line (default: this file's first two variants)
VARIANTS = [(name, importlib.import_module(name).w4a16_grouped_gluon)
            for name in (sys.argv[1:] or ["_w4g_exp", "_w4g_unroll"])]
CASES = [("W13 EP8", 16, 1536, 2048, m) for m in (16, 32, 64, 128, 256)] + [
    ("W2 EP8", 16, 2048, 768, m) for m in (8, 64, 256)] + [
    ("W13 E128", 128, 1536, 2048, m) for m in (8, 64, 256, 1024)] + [
    ("W2 E128", 128, 2048, 768, m) for m in (8, 64, 256, 1024)]

for label, e, n, k, m in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    tiles = gluon_tiles(x.shape[0], e, k) or (16, 128, 3)
    runs = [("GEMM", tiles, {})]
    if label.startswith("W13") and m in (64, 256):
        runs.append(("fused", (tiles[0], *gluon_swiglu_tiles(tiles[0], e)), {"swiglu": True}))
    for kind, t, kw in runs:
        want = base(x, qws[0], counts, *t, **kw)
        t_base = graph_us([lambda q=q: base(x, q, counts, *t, **kw) for q in qws], calls=STEP_CALLS)
        cells = []
        for name, fn in VARIANTS:
            same = torch.equal(fn(x, qws[0], counts, *t, **kw), want)
            tv = graph_us([lambda q=q: fn(x, q, counts, *t, **kw) for q in qws], calls=STEP_CALLS)
            cells.append(f"{name} {tv:.1f} ({t_base / tv:.3f}x){'' if same else ' BITS DIFFER'}")
        print(f"{label} M={m} {kind} {t}: committed {t_base:.1f} us | " + " | ".join(cells),
              flush=True)
    del qws
