"""Gluon fc1 + SwiGLU: bits against the unfused Gluon GEMM + torch activation; CUDA-graph times."""
import torch
from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import gated_activation
from qarl_kernels.bench import _w4a16_weights, _batch
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_gemm import gluon_tiles, w4a16_grouped_swiglu
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
scheme = get_scheme("w4a16")
for label, e, n, k, ms in [("W13 EP8", 16, 1536, 2048, (64, 128, 256)), ("W13 E128", 128, 1536, 2048, (256, 1024)),
                           ("W13 TP2", 128, 768, 2048, (256, 1024))]:
    qws, _ = _w4a16_weights(scheme, e, n, k)
    for m in ms:
        counts, rows, _, x, _ = _batch(m, e, k)
        c = counts.cuda()
        probs = torch.rand(rows, device="cuda")
        bm, bn, st = gluon_tiles(rows, e, k)
        unf = gated_activation(w4a16_grouped_gluon(x, qws[0], c, bm, bn, st), probs)
        line = f"{label} M={m} tiles {(bm, bn, st)}:"
        t_unf = graph_us([lambda q=q: gated_activation(w4a16_grouped_gluon(x, q, c, bm, bn, st), probs) for q in qws])
        t_tri = graph_us([lambda q=q: w4a16_grouped_swiglu(x, q, counts, probs) for q in qws]) if rows <= 64 * e else float("nan")
        line += f" gluon GEMM+act {t_unf:.1f} | triton fused {t_tri:.1f} |"
        for fbn in (64, 128):
            for fst in (2, 3):
                try:
                    got = w4a16_grouped_gluon(x, qws[0], c, bm, fbn, fst, swiglu=True, probs=probs)
                    torch.cuda.synchronize()
                    same = torch.equal(got, unf)
                    t = graph_us([lambda q=q: w4a16_grouped_gluon(x, q, c, bm, fbn, fst, swiglu=True, probs=probs) for q in qws])
                    line += f" fused bn{fbn} st{fst} {t:.1f} {'bits ok' if same else 'DIFF %d' % int((got != unf).sum())};"
                except Exception as ex:
                    line += f" fused bn{fbn} st{fst} FAIL {type(ex).__name__} {str(ex)[:80]};"
        print(line, flush=True)
    del qws
