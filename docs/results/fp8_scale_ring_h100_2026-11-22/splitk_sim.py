"""Would split-K pay? The Gluon kernel on E experts x K against 2E experts x K/2 with the same
tokens per expert (same bytes, same FLOPs, twice the CTAs of half the chain). CUDA graphs."""
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights, _batch
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon

scheme = get_scheme("w4a16")
TILES = [(64, 64, 3), (64, 64, 2), (64, 128, 3), (64, 128, 2), (128, 64, 2), (128, 128, 2), (128, 64, 3), (32, 64, 3)]
for label, e, n, k, m in [("W13 EP8", 16, 1536, 2048, 64), ("W13 EP8", 16, 1536, 2048, 256),
                          ("W2 EP8", 16, 2048, 768, 64), ("W2 EP8", 16, 2048, 768, 256)]:
    counts, rows, touched, x, offs = _batch(m, e, k)
    for mult in (1, 2, 4):
        if (k // 128) % mult:
            continue
        ee, kk = e * mult, k // mult
        c = counts.repeat(mult)
        xx = torch.randn(int(c.sum()), kk, device="cuda", dtype=torch.bfloat16)
        qws, bf = _w4a16_weights(scheme, ee, n, kk)
        del bf
        res = []
        for bm, bn, st in TILES:
            if bm < 64 and m > 64:
                continue
            t = graph_us([lambda q=q: w4a16_grouped_gluon(xx, q, c, bm, bn, st) for q in qws])
            res.append((t, (bm, bn, st)))
        res.sort()
        print(f"{label} M={m} split-sim x{mult} (E={ee}, K={kk}): " + "; ".join(f"{t:.1f} {cfg}" for t, cfg in res[:5]), flush=True)
        del qws
