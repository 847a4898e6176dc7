"""Session 37, call 15: FP8 grouped GEMM tiles at E128 from 2048 rows up to the Gluon kernel's
32 rows an expert (the Triton kernel with the old rule there; call 10 swept below 2048 rows).
CUDA graphs of 10 calls, weights rotated past L2, 2 routings; every tile checked against the
reference (relative norm error < 1e-2)."""
import statistics
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.fp8_gemm import _decode_tiles, _tiles, fp8_block_grouped_matmul
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation

torch.manual_seed(0)
fp8 = get_scheme("fp8-block")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=80)
TILES = [(16, 64, 4, 4), (16, 128, 4, 4), (16, 128, 4, 3), (32, 64, 4, 4), (32, 128, 4, 4),
         (64, 128, 4, 4), (16, 256, 8, 3), (32, 256, 8, 3), (64, 64, 4, 4), (16, 64, 2, 4)]
LAYOUTS = [("E128", 128, None)]
M_LIST = (256, 320, 384, 448)
for label, e, routed in LAYOUTS:
    for proj, n, k in (("W13", 1536, 2048), ("W2", 2048, 768)):
        master = torch.randn(e, n, k, device="cuda")
        qws = [fp8_block_quantize(master + i, fp8) for i in range(copies_for(e * n * k))]
        for m in M_LIST:
            per = {}
            for seed in (0, 1):
                counts = route(m, routed or e, 8, seed=seed, local=e if routed else None)
                rows = int(counts.sum())
                if rows == 0 or rows >= 32 * e:
                    continue
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                xq, xs = fp8_quantize_activation(x)
                ref = fp8.reference_grouped_matmul(x, qws[0], counts.cpu()).float()
                for tiles in [None] + TILES:
                    y = fp8_block_grouped_matmul(xq, xs, qws[0], counts, tiles).float()
                    err = float((y - ref).norm() / ref.norm())
                    if err > 1e-2:
                        print("WRONG", label, proj, m, tiles, err, flush=True); continue
                    us = t([lambda q=q: fp8_block_grouped_matmul(xq, xs, q, counts, tiles) for q in qws])
                    per.setdefault(tiles, []).append(us)
            if not per:
                continue
            med = {tl_: statistics.median(v) for tl_, v in per.items()}
            best = min((v, tl_) for tl_, v in med.items() if tl_ is not None)
            rule = _tiles(rows // e, k)
            print("  decode rule would give", _decode_tiles(rows, e, k), flush=True)
            print(f"{label:17s} {proj} M={m:4d} rows/expert {rows / e:6.1f} | rule {rule} {med[None]:6.1f} | best {best[1]} {best[0]:6.1f} ({med[None] / best[0]:.2f}x) | "
                  + " ".join(f"{tl_[0]}x{tl_[1]}w{tl_[2]}s{tl_[3]}={v:.1f}" for tl_, v in med.items() if tl_ is not None), flush=True)
        del qws
