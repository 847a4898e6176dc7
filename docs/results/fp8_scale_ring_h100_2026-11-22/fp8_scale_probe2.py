"""FP8 WS kernel with the scales in the ring (this tree) against the committed one (scales loaded
by the consumers). Bits compared; CUDA graphs, weights rotated."""
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation
from qarl_kernels.fp8_grouped_ws import fp8_grouped_ws, default_tiles
from qarl_kernels._fp8_ws_old import fp8_grouped_ws as old

scheme = get_scheme("fp8-block")
for label, e, n, k, m in [("W2 EP8", 16, 2048, 768, 4096), ("W2 EP8", 16, 2048, 768, 16384),
                          ("W13 EP8", 16, 1536, 2048, 4096), ("W13 EP8", 16, 1536, 2048, 16384),
                          ("W2 E128", 128, 2048, 768, 4096), ("W2 E128", 128, 2048, 768, 16384),
                          ("W13 E128", 128, 1536, 2048, 4096), ("W13 E128", 128, 1536, 2048, 16384)]:
    master = torch.randn(e, n, k, device="cuda")
    qws = [fp8_block_quantize(master + i, scheme) for i in range(3)]
    bf = [torch.randn(e, n, k, device="cuda", dtype=torch.bfloat16).transpose(1, 2) for _ in range(2)]
    tpe = route(m, e, 8)
    offs = torch.cumsum(tpe, 0, dtype=torch.int32)
    x = torch.randn(int(tpe.sum()), k, device="cuda").bfloat16()
    xq, xs = fp8_quantize_activation(x)
    t_bf = graph_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf])
    line = f"{label} M={m}: bf16 {t_bf:.1f}; old {default_tiles(e)}"
    t = graph_us([lambda q=q: old(xq, xs, q, tpe) for q in qws])
    line += f" {t:.1f} ({t_bf/t:.2f}x)"
    for tiles in [(128, 4), (128, 3), (256, 3), (256, 2)]:
        same = torch.equal(fp8_grouped_ws(xq, xs, qws[0], tpe, tiles), old(xq, xs, qws[0], tpe, tiles))
        t = graph_us([lambda q=q: fp8_grouped_ws(xq, xs, q, tpe, tiles) for q in qws])
        line += f" | {tiles} {t:.1f} ({t_bf/t:.2f}x){'' if same else ' BITS DIFFER'}"
    print(line, flush=True)
    del qws, bf
