"""Large-M and SwiGLU checks for the Gluon routing; CUDA graphs."""
import torch
from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import gated_activation
from qarl_kernels.bench import _w4a16_weights, _batch
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_gemm import _launch, default_config, gluon_tiles, w4a16_grouped_swiglu, w4a16_grouped_matmul
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
scheme = get_scheme("w4a16")
for label, e, n, k, ms in [("W13 E128", 128, 1536, 2048, (256, 1024)), ("W2 E128", 128, 2048, 768, (1024,)),
                           ("W13 TP2", 128, 768, 2048, (256, 1024)), ("W13 EP8", 16, 1536, 2048, (8, 64, 128, 256)),
                           ("W2 EP8", 16, 2048, 768, (128,))]:
    qws, bf = _w4a16_weights(scheme, e, n, k)
    for m in ms:
        counts, rows, touched, x, offs = _batch(m, e, k)
        c = counts.cuda()
        t_tri = graph_us([lambda q=q: _launch(x, q, c, e, False, None) for q in qws])
        res = {}
        for tiles in [(32, 128, 3), (64, 128, 3), (128, 64, 3), (64, 64, 3), (128, 128, 3)]:
            res[tiles] = graph_us([lambda q=q: w4a16_grouped_gluon(x, q, c, *tiles) for q in qws])
        pick = gluon_tiles(rows, e, k)
        line = f"{label} M={m} rows/expert={rows//e}: triton {t_tri:.1f} | rule {pick} " + " ".join(f"{t}:{v:.1f}" for t, v in res.items())
        if label.startswith("W13"):
            probs = torch.rand(rows, device="cuda")
            t_fused = graph_us([lambda q=q: w4a16_grouped_swiglu(x, q, counts, probs) for q in qws])
            t_op = graph_us([lambda q=q: gated_activation(w4a16_grouped_matmul(x, q, counts), probs) for q in qws])
            line += f" | swiglu fused triton {t_fused:.1f} vs op GEMM+act {t_op:.1f}"
        print(line, flush=True)
    del qws, bf
