"""Sweep: dense W4A16 through the Gluon kernel with K split in-kernel (split_k), at 1-512 tokens,
against bf16 and the current w4a16_linear; CUDA graphs of 10 calls, weights rotated past L2.
Writes one CSV row per (shape, M, config) and prints the best per cell."""
import csv
import itertools
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import torch

SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
          ("o_proj TP2", 2048, 2048)]
MS = [1, 8, 16, 32, 64, 128, 256, 512]


def configs(m, k):
    """(block_m, block_n, stages, groups, split, x_async)"""
    bms = {1: [8], 8: [8], 16: [16], 32: [16, 32], 64: [32, 64], 128: [64, 128], 256: [64, 128],
           512: [128]}[m]
    out = []
    for bm, bn, g, s in itertools.product(bms, (64, 128), (1, 2), (1, 2, 4, 8)):
        if k % (128 * g * s):
            continue
        st = 2 if bm == 128 else 3
        out.append((bm, bn, st, g, s, False))
        if bm <= 16:
            out.append((bm, bn, 4, g, s, False))
            out.append((bm, bn, st, g, s, True))
    return out


def run_cfg(x, q, counts, cfg):
    from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
    bm, bn, st, g, s, xa = cfg
    return w4a16_grouped_gluon(x, q, counts, bm, bn, st, groups=g, split_k=s, x_async=xa,
                               pdl=True)


def warm(jobs):
    from megatron_qarl.quant import get_scheme
    from qarl_kernels.w4a16_quantize import w4a16_quantize
    scheme = get_scheme("w4a16-g128")
    for k, cfg in jobs:
        q = w4a16_quantize(torch.randn(512, k, device="cuda"), scheme)
        x = torch.randn(cfg[0], k, device="cuda", dtype=torch.bfloat16)
        counts = torch.tensor([cfg[0]], device="cuda", dtype=torch.int32)
        try:
            run_cfg(x, q, counts, cfg)
        except Exception as err:
            print("warm fail", cfg, str(err).splitlines()[0][:100], flush=True)
    torch.cuda.synchronize()


def main():
    t0 = time.time()
    jobs = sorted({(k, c) for _, n, k in SHAPES for m in MS for c in configs(m, k)})
    chunks = [jobs[i::12] for i in range(12)]
    with ProcessPoolExecutor(12, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(warm, chunks))
    print(f"precompiled {len(jobs)} in {time.time() - t0:.0f} s", flush=True)

    from megatron_qarl.quant import get_scheme
    from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
    from qarl_kernels.w4a16_gemm import w4a16_linear
    from qarl_kernels.w4a16_lanes import lane_codes
    from qarl_kernels.w4a16_quantize import w4a16_quantize
    scheme = get_scheme("w4a16-g128")
    limit = float(sys.argv[1])
    out = open(os.path.join(os.environ.get("OUT", "."), "dense_split_sweep.csv"), "w")
    w = csv.writer(out)
    w.writerow(["shape", "m", "block_m", "block_n", "stages", "groups", "split", "x_async",
                "us", "bf16_us", "current_us"])

    def t(fns):
        return graph_us(fns, replays=60, calls=STEP_CALLS)

    for label, n, k in SHAPES:
        master = torch.randn(n, k, device="cuda")
        wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
        qs = [w4a16_quantize(master + i, scheme) for i in range(copies_for(n * k // 2))]
        for q in qs:
            lane_codes(q)
        for m in MS:
            if time.time() - t0 > limit:
                print("TIME LIMIT", flush=True)
                out.close()
                return
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            counts = torch.tensor([m], device="cuda", dtype=torch.int32)
            want = scheme.reference_matmul(x, qs[0]).float()
            tb = t([lambda w_=w_: x @ w_.t() for w_ in wb])
            tcur = t([lambda q=q: w4a16_linear(x, q) for q in qs])
            res = []
            for cfg in configs(m, k):
                try:
                    y = run_cfg(x, qs[0], counts, cfg)
                    y2 = run_cfg(x, qs[0], counts, cfg)
                except Exception as err:
                    print("  skip", cfg, str(err).splitlines()[0][:100], flush=True)
                    continue
                err = ((y.float() - want).norm() / want.norm()).item()
                if not err < 1e-2 or not torch.equal(y, y2):
                    print("  WRONG", cfg, err, torch.equal(y, y2), flush=True)
                    continue
                us = t([lambda q=q, c=cfg: run_cfg(x, q, counts, c) for q in qs])
                res.append((us, cfg))
                w.writerow([label, m, *cfg, f"{us:.2f}", f"{tb:.2f}", f"{tcur:.2f}"])
            res.sort()
            print(f"{label} M={m}: bf16 {tb:.1f} current {tcur:.1f} | "
                  + "; ".join(f"{u:.1f} m{c[0]} n{c[1]} st{c[2]} g{c[3]} s{c[4]}"
                              + (" xa" if c[5] else "") for u, c in res[:4])
                  + f" | best {tb / res[0][0]:.2f}x bf16, {tcur / res[0][0]:.2f}x current",
                  flush=True)
            out.flush()
        del wb, qs
    out.close()
    print(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
