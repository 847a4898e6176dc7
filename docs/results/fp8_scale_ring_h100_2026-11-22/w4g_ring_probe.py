"""Gluon W4A16 with the scale words in the ring (this tree) vs before (scales loaded into
registers one block ahead). Bits compared; CUDA graphs, weights rotated."""
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights, _batch
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as new
from qarl_kernels._w4g_old import w4a16_grouped_gluon as old

scheme = get_scheme("w4a16")
for label, e, n, k, ms in [("W13 EP8", 16, 1536, 2048, (32, 64, 128, 256)), ("W2 EP8", 16, 2048, 768, (64, 256)),
                           ("W13 E128", 128, 1536, 2048, (256, 1024)), ("W2 E128", 128, 2048, 768, (1024,)),
                           ("W13 TP2", 128, 768, 2048, (256,))]:
    qws, bf = _w4a16_weights(scheme, e, n, k)
    for m in ms:
        counts, rows, touched, x, offs = _batch(m, e, k)
        tiles = gluon_tiles(rows, e, k)
        t_bf = graph_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf])
        same = torch.equal(new(x, qws[0], counts, *tiles), old(x, qws[0], counts, *tiles))
        t0 = graph_us([lambda q=q: old(x, q, counts, *tiles) for q in qws])
        t = graph_us([lambda q=q: new(x, q, counts, *tiles) for q in qws])
        line = f"{label} M={m} {tiles}: bf16 {t_bf:.1f} | before {t0:.1f} ({t_bf/t0:.2f}x) | ring {t:.1f} ({t_bf/t:.2f}x, {t0/t:.3f})"
        if label.startswith("W13"):
            st = (tiles[0],) + gluon_swiglu_tiles(tiles[0])
            same &= torch.equal(new(x, qws[0], counts, *st, swiglu=True), old(x, qws[0], counts, *st, swiglu=True))
            f0 = graph_us([lambda q=q: old(x, q, counts, *st, swiglu=True) for q in qws])
            f = graph_us([lambda q=q: new(x, q, counts, *st, swiglu=True) for q in qws])
            line += f" | swiglu {st} before {f0:.1f} ring {f:.1f} ({f0/f:.3f})"
        print(line + ("" if same else " BITS DIFFER"), flush=True)
    del qws, bf
