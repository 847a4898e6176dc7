"""Lane-order codes (this session's kernel) against round 10's kernel reading the serving layout,
same tiles, 10 calls per graph, bits compared."""
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as new
from qarl_kernels.w4a16_lanes import lane_codes
from _w4g_r10 import w4a16_grouped_gluon as old

CASES = [("W13 EP8", 16, 1536, 2048, m) for m in (32, 64, 128, 256)] + [
    ("W2 EP8", 16, 2048, 768, m) for m in (64, 256)] + [
    ("W13 E128", 128, 1536, 2048, m) for m in (256, 1024)] + [("W2 E128", 128, 2048, 768, 1024)]

for label, e, n, k, m in CASES:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    tiles = gluon_tiles(x.shape[0], e, k)
    runs = [("GEMM", tiles, {})]
    if label.startswith("W13"):
        runs.append(("fused", (tiles[0], *gluon_swiglu_tiles(tiles[0], e)), {"swiglu": True}))
    for kind, t, kw in runs:
        same = torch.equal(old(x, qws[0], counts, *t, **kw), new(x, qws[0], counts, *t, **kw))
        t_old = graph_us([lambda q=q: old(x, q, counts, *t, **kw) for q in qws], calls=STEP_CALLS)
        t_new = graph_us([lambda q=q: new(x, q, counts, *t, **kw) for q in qws], calls=STEP_CALLS)
        print(f"{label} M={m} {kind} {t}: serving order {t_old:.1f} us, lane order {t_new:.1f} us"
              f" ({t_old / t_new:.3f}x){'' if same else ' BITS DIFFER'}", flush=True)
    del qws
