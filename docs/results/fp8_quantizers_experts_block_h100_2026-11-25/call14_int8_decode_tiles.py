"""Session 37: INT8 grouped GEMM tiles at decode sizes (as call 10 did for FP8), CUDA graphs of
10 calls, weights rotated past L2, 2 routings; every tile's output equal to the rule's bits
(int32 sums: tiles cannot change them)."""
import statistics
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.int8_gemm import int8_matmul, int8_tiles
from qarl_kernels.int8_quantize import int8_quantize_activation

torch.manual_seed(0)
int8 = get_scheme("int8")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=80)
TILES = [(16, 64, 4, 4), (16, 128, 4, 4), (16, 128, 4, 3), (32, 64, 4, 4), (32, 128, 4, 4),
         (64, 128, 4, 3), (64, 64, 4, 4), (64, 64, 4, 3), (16, 256, 8, 3), (64, 128, 4, 4)]
LAYOUTS = [("E128", 128, None), ("EP8 TP attention", 16, 128), ("EP8 DP", 16, None)]
for label, e, routed in LAYOUTS:
    for proj, n, k in (("W13", 1536, 2048), ("W2", 2048, 768)):
        master = torch.randn(e, n, k, device="cuda")
        qws = [int8.quantize_weight(master + i) for i in range(copies_for(e * n * k))]
        for m in (1, 8, 32, 64, 128, 256):
            per = {}
            for seed in (0, 1):
                counts = route(m, routed or e, 8, seed=seed, local=e if routed else None)
                rows = int(counts.sum())
                if rows == 0:
                    continue
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                xq, xs = int8_quantize_activation(x)
                want = int8_matmul(xq, xs, qws[0], counts)
                for tiles in [None] + TILES:
                    if not torch.equal(int8_matmul(xq, xs, qws[0], counts, tiles), want):
                        print("DIFFER", label, proj, m, tiles, flush=True); continue
                    us = t([lambda q=q: int8_matmul(xq, xs, q, counts, tiles) for q in qws])
                    per.setdefault(tiles, []).append(us)
            if not per:
                continue
            med = {tl_: statistics.median(v) for tl_, v in per.items()}
            best = min((v, tl_) for tl_, v in med.items() if tl_ is not None)
            print(f"{label:17s} {proj} M={m:4d} rows/expert {rows / e:6.1f} | rule {int8_tiles(rows // e, False)} {med[None]:6.1f} | best {best[1]} {best[0]:6.1f} ({med[None] / best[0]:.2f}x) | "
                  + " ".join(f"{tl_[0]}x{tl_[1]}w{tl_[2]}s{tl_[3]}={v:.1f}" for tl_, v in med.items() if tl_ is not None), flush=True)
        del qws
