"""Session 60, call 2 of this folder: does a longer K step per loop iteration break the dense
GEMMs' floor at decode sizes? The INT8 GEMM alone (int32 sums are exact at any K step) with
BLOCK_K 128 (now), 256 and 512 over tiles (block_m 16/32/64, block_n 32/64) and K splits 1-8,
1-256 tokens, attention's projections and their TP2 halves; the best of each K step re-timed in
ROUNDS interleaved rounds beside bf16. CUDA graphs of 10 calls, weights rotated past L2.
Usage: int8_kstep.py [ROUNDS TOKENS...]"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_gemm
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_quantize import int8_quantize_activation

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
TOKENS = [int(t) for t in sys.argv[2:]] or [1, 8, 16, 64, 128, 256]
K_STEPS = (128, 256, 512)


def timed(fns, block_k):
    int8_gemm._BLOCK_K = block_k  # read by int8_matmul at each call (graph capture included)
    try:
        return graph_us(fns, calls=STEP_CALLS)
    except Exception as e:  # a tile that does not build (shared memory) is reported, not fatal
        print(f"  failed: {type(e).__name__}: {str(e)[:120]}", flush=True)
        return float("inf")
    finally:
        int8_gemm._BLOCK_K = 128


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("int8")
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
        for rows in TOKENS:
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = int8_quantize_activation(x)
            ref = int8_gemm.int8_matmul(xq, xs, qws[0])
            best = {}
            for block_k in K_STEPS:
                tiles = [(bm, bn, 4, 4, s) for bm in (16, 32, 64) if bm <= max(16, rows)
                         for bn in (32, 64) for s in (1, 2, 4, 8) if k // block_k >= s]
                sweep = {t: timed([lambda q=q, t=t: int8_gemm.int8_matmul(xq, xs, q, tiles=t)
                                   for q in qws], block_k) for t in tiles}
                t = min(sweep, key=sweep.get)
                int8_gemm._BLOCK_K = block_k
                assert torch.equal(int8_gemm.int8_matmul(xq, xs, qws[0], tiles=t), ref)
                int8_gemm._BLOCK_K = 128
                best[block_k] = t
                print(f"INT8 {label} {rows}x{n}x{k} K step {block_k}: best {t} "
                      f"{sweep[t]:.2f} us", flush=True)
            runs = []
            for _ in range(ROUNDS):
                r = {f"K step {bk} {t}": timed([lambda q=q, t=t: int8_gemm.int8_matmul(
                    xq, xs, q, tiles=t) for q in qws], bk) for bk, t in best.items()}
                r["route"] = timed([lambda q=q: int8_gemm.int8_matmul(xq, xs, q) for q in qws],
                                   128)
                r["bf16"] = graph_us([lambda w=w: x @ w.t() for w in wbs], calls=STEP_CALLS)
                runs.append(r)
            med = {a: statistics.median(r[a] for r in runs) for a in runs[0]}
            print(f"INT8 {label} {rows}x{n}x{k} medians of {ROUNDS}: " + ", ".join(
                f"{a} {v:.2f} us ({med['bf16'] / v:.2f}x bf16)" for a, v in
                sorted(med.items(), key=lambda kv: kv[1])), flush=True)


if __name__ == "__main__":
    main()
