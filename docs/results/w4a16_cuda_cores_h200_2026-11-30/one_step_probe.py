"""Session 58, call 2 of this folder: cuda_cores_probe.py at one token only, with K steps of
up to 2048 inputs: call 1's best configs took 512-input steps, each step's loads waiting on
the step before (no cp.async in the build), so a whole row of K in one step asks for all of
a program's words at once. CUDA graphs of 10 calls, four weight copies
rotated, five interleaved rounds, medians; each config's output against the op's first.
Usage: cuda_cores_probe.py (PYTHONPATH holds qarl_kernels)"""
import itertools
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, graph_us, route
from qarl_kernels.w4a16_gemm import (W4A16Config, w4a16_grouped_linear, w4a16_grouped_matmul,
                                     w4a16_linear)

ROUNDS, COPIES = 5, 4
DENSE = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
         ("o_proj TP2", 2048, 2048)]
GROUPED = [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768),
           ("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768)]
BLOCK_N, WARPS, BLOCK_K = (4, 8, 16), (2, 4, 8), (512, 1024, 2048)


def configs(block_m, k):
    return [W4A16Config(block_m, bn, block_k=bk, num_warps=w, cuda_cores=True)
            for bn, w, bk in itertools.product(BLOCK_N, WARPS, BLOCK_K)
            if 8 <= bn * block_m * bk // 4 // (32 * w) <= 64]  # products a thread


def timed(label, fns):
    runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
            for _ in range(ROUNDS)]
    med = {name: statistics.median(r[name] for r in runs) for name in fns}
    best = min((t, name) for name, t in med.items() if name.startswith("cc"))
    print(f"{label}: bf16 {med['bf16']:.2f} us, op {med['op']:.2f} us, best CUDA-core "
          f"{best[1]} {best[0]:.2f} us: {med['op'] / best[0]:.2f}x the op, "
          f"{med['bf16'] / best[0]:.2f}x bf16 (op {med['bf16'] / med['op']:.2f}x)", flush=True)
    print("    " + ", ".join(f"{name} {t:.2f}" for name, t in sorted(med.items(),
                                                               key=lambda kv: kv[1])[:6]))


def close(got, want):
    return ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("w4a16")
    worst = 0.0
    for label, n, k in DENSE:
        masters = [torch.randn(n, k, device="cuda") * 0.02 for _ in range(COPIES)]
        wbs, qws = [m.bfloat16() for m in masters], [scheme.quantize_weight(m) for m in masters]
        for rows in (1,):
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            want = w4a16_linear(x, qws[0])
            fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs],
                   "op": [lambda q=q: w4a16_linear(x, q) for q in qws]}
            for cfg in configs(rows, k):
                worst = max(worst, close(w4a16_linear(x, qws[0], cfg), want))
                fns[f"cc n{cfg.block_n} w{cfg.num_warps} k{cfg.block_k}"] = [
                    lambda q=q, c=cfg: w4a16_linear(x, q, c) for q in qws]
            timed(f"dense {label} {rows}x{n}x{k}", fns)
    for label, experts, n, k in GROUPED:
        masters = [torch.randn(experts, n, k, device="cuda") * 0.02 for _ in range(COPIES)]
        qws = [scheme.quantize_weight(m) for m in masters]
        wbs = [m.bfloat16() for m in masters]
        counts = route(1, 128, 8, local=experts)
        offs = counts.cumsum(0).to(torch.int32)
        rows = int(counts.sum())
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        want = w4a16_grouped_linear(x, qws[0], counts)
        fns = {"bf16": [lambda w=w: torch._grouped_mm(x, w.transpose(1, 2), offs=offs)
                        for w in wbs],
               "op": [lambda q=q: w4a16_grouped_linear(x, q, counts) for q in qws]}
        for cfg in configs(1, k):
            worst = max(worst, close(w4a16_grouped_matmul(x, qws[0], counts, cfg), want))
            fns[f"cc n{cfg.block_n} w{cfg.num_warps} k{cfg.block_k}"] = [
                lambda q=q, c=cfg: w4a16_grouped_matmul(x, q, counts, c) for q in qws]
        timed(f"grouped {label} M=1 ({rows} rows)", fns)
    print(f"largest |CUDA-core - op| / max |op| over every config: {worst:.2e}")


if __name__ == "__main__":
    main()
