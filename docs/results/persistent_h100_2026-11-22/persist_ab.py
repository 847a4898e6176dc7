"""Round 12: persistent grid (programs walk tiles, ring across them) against one program per
tile. Per case: the committed route (round 11 kernel file _w4g_r11 and this tree's kernel with
ctas_per_sm=None, which must match it), then persistent tiles x CTAs per SM. 10 calls per graph;
bits compared with the committed route."""
import sys, itertools
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench_setup import graph_us, route, STEP_CALLS
from qarl_kernels.tune import _rotated_w4a16
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as new
from qarl_kernels.w4a16_lanes import lane_codes
from _w4g_r11 import w4a16_grouped_gluon as old

FULL = [("W2 E128", 128, 2048, 768, 8), ("W13 TP2", 128, 768, 2048, 8),
        ("W2 E128", 128, 2048, 768, 1), ("W13 E128", 128, 1536, 2048, 8),
        ("W2 EP8", 16, 2048, 768, 8), ("W13 EP8", 16, 1536, 2048, 8)]
SHORT = [("W13 E128", 128, 1536, 2048, 1), ("W13 E128", 128, 1536, 2048, 64),
         ("W2 E128", 128, 2048, 768, 64), ("W13 TP2", 128, 768, 2048, 64),
         ("W2 E128", 128, 2048, 768, 256), ("W13 EP8", 16, 1536, 2048, 64),
         ("W2 EP8", 16, 2048, 768, 64), ("W13 E128", 128, 1536, 2048, 256)]
which = sys.argv[1] if len(sys.argv) > 1 else "full"
cases = FULL if which == "full" else SHORT

def t_us(fn, qws):
    return graph_us([lambda q=q: fn(q) for q in qws], calls=STEP_CALLS)

for label, e, n, k, m in cases:
    counts = route(m, e, 8)
    qws = _rotated_w4a16(e, n, k)
    for q in qws:
        lane_codes(q)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    tiles = gluon_tiles(x.shape[0], e, n, k)
    want = old(x, qws[0], counts, *tiles)
    t_old = t_us(lambda q: old(x, q, counts, *tiles), qws)
    same = torch.equal(new(x, qws[0], counts, *tiles), want)
    t_new = t_us(lambda q: new(x, q, counts, *tiles), qws)
    print(f"{label} M={m} committed {tiles}: r11 {t_old:.1f} us, this tree {t_new:.1f}"
          f"{'' if same else ' BITS DIFFER'}", flush=True)
    bm = tiles[0]
    if which == "full":
        grid = itertools.product((bm,), (64, 128), (2, 3, 4), (None, 96, 128), (1, 2, 3, 4, 6, 8))
    else:
        grid = itertools.product((bm,), (tiles[1],), (tiles[2], ), (tiles[3],), (1, 2, 3, 4))
    res = []
    for bm_, bn, st, reg, per_sm in grid:
        if reg is not None and bn != 128:
            continue
        cfg = (bm_, bn, st, reg, per_sm)
        try:
            y = new(x, qws[0], counts, *cfg)
        except Exception as ex:  # out of resources
            print(f"  {cfg}: {type(ex).__name__}", flush=True)
            continue
        ok = torch.equal(y, want) if (bn, reg) == (tiles[1], tiles[3]) else \
            ((y.float() - want.float()).norm() / want.float().norm()).item() < 1e-2
        t = t_us(lambda q: new(x, q, counts, *cfg), qws)
        res.append((t, cfg, ok))
    res.sort()
    for t, cfg, ok in res[:8]:
        print(f"  persistent {cfg}: {t:.1f} us ({t_old / t:.3f}x){'' if ok else ' WRONG'}",
              flush=True)
    del qws
