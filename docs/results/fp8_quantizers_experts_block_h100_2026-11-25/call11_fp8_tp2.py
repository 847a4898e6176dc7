"""Session 37: the FP8 decode tiles at TP2's expert shapes (not in the sweep), old rule
(_tiles) against new (_decode_tiles), CUDA graphs of 10 calls, 2 routings."""
import statistics
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.fp8_gemm import _decode_tiles, _tiles, fp8_block_grouped_matmul
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation
torch.manual_seed(0)
fp8 = get_scheme("fp8-block")
for proj, n, k in (("W13 TP2", 768, 2048), ("W2 TP2", 2048, 384)):
    master = torch.randn(128, n, k, device="cuda")
    qws = [fp8_block_quantize(master + i, fp8) for i in range(copies_for(128 * n * k))]
    for m in (1, 8, 32, 64, 128, 256):
        old, new = [], []
        for seed in (0, 1):
            counts = route(m, 128, 8, seed=seed)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = fp8_quantize_activation(x)
            for tiles, out in ((_tiles(rows // 128, k), old), (_decode_tiles(rows, 128, k), new)):
                out.append(graph_us([lambda q=q: fp8_block_grouped_matmul(xq, xs, q, counts, tiles) for q in qws], calls=STEP_CALLS, replays=80))
        o, w = statistics.median(old), statistics.median(new)
        print(f"{proj} M={m:4d}: old {_tiles(rows // 128, k)} {o:6.1f} us | new {_decode_tiles(rows, 128, k)} {w:6.1f} us | {o / w:.2f}x", flush=True)
    del qws
