"""Warp-local expert tables (every warp holds all E_PAD entries) against the tables of 33aba43
(one entry per thread: 128 experts over 4 warps): the same kernel and tiles otherwise, the
rules' tiles, 4 uniform routings, graphs of 10 calls, alternating 3 rounds; same bits."""
import os, statistics, sys
sys.path.insert(0, os.path.dirname(__file__))
import torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_x_async, gluon_pdl
from qarl_kernels import w4a16_gluon as new
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import _w4g_old as old

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
for label, ms in [("W2 E128", (1, 4, 8, 16, 64, 256)), ("W13 E128", (1, 8, 64, 256)),
                  ("W13 TP2", (1, 8, 64, 256)), ("W13 EP8", (8,))]:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for m in ms:
        rows = m * TOP_K
        tiles = gluon_tiles(rows, e, n, k)
        xa, pdl = gluon_x_async(rows, e, n, k), gluon_pdl(rows)
        res = {"old": [], "new": []}
        same = True
        for seed in range(4):
            counts = route(m, e, TOP_K, seed=seed)
            x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
            fns = {v: (lambda q, mod=mod: mod.w4a16_grouped_gluon(x, q, counts, *tiles,
                                                                   x_async=xa, pdl=pdl))
                   for v, mod in (("old", old), ("new", new))}
            same &= torch.equal(fns["old"](qws[0]), fns["new"](qws[0]))
            for _ in range(3):
                for v, fn in fns.items():
                    res[v].append(graph_us([lambda q=q, fn=fn: fn(q) for q in qws],
                                           calls=STEP_CALLS))
        o, nw = statistics.median(res["old"]), statistics.median(res["new"])
        print(f"{label} M={m} {tiles} same bits {same}: old {o:.2f} us | new {nw:.2f} us | "
              f"{o / nw:.3f}x (new range {min(res['new']):.1f}-{max(res['new']):.1f})", flush=True)
    del qws
