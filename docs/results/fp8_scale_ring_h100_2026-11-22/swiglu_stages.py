"""Stages of the fused fc1 + SwiGLU Gluon epilogue (and the E128 M=1024 GEMM), twice each."""
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights, _batch
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as g

scheme = get_scheme("w4a16")
for label, e, n, k, ms in [("W13 EP8", 16, 1536, 2048, (32, 64)), ("W13 E128", 128, 1536, 2048, (256, 1024))]:
    qws, bf = _w4a16_weights(scheme, e, n, k)
    del bf
    for m in ms:
        counts, rows, touched, x, offs = _batch(m, e, k)
        probs = torch.rand(rows, device="cuda")
        bm = 32 if rows // e < 32 else (64 if rows // e < 64 or e >= 64 else 128)
        line = f"{label} M={m} bm={bm}:"
        for rep in range(2):
            for st in (2, 3):
                t = graph_us([lambda q=q: g(x, q, counts, bm, 64, st, swiglu=True, probs=probs) for q in qws])
                line += f" swiglu st{st} {t:.1f};"
            if m == 1024:
                for st in (2, 3):
                    t = graph_us([lambda q=q: g(x, q, counts, 64, 128, st) for q in qws])
                    line += f" gemm 64x128 st{st} {t:.1f};"
        print(line, flush=True)
    del qws
