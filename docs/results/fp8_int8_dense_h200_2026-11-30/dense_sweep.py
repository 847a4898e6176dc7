"""Session 60, call 1 of this folder: the FP8 and INT8 dense GEMMs alone (activations quantized
once) at 16-256 tokens over tiles (block_m 16/32/64, block_n 32/64/128) and K splits (1-8), 4
warps, 4 stages, at attention's projections and their TP2 halves; then the four fastest of each
cell, the fastest launched with PDL, the route now, (FP8) cuBLAS's scaled_mm and bf16 re-timed
in ROUNDS interleaved rounds. CUDA graphs of 10 calls, weights rotated past L2. Usage:
dense_sweep.py [ROUNDS TOKENS...]"""
import contextlib
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_gemm, int8_gemm
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_quantize import int8_quantize_activation

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
TOKENS = [int(t) for t in sys.argv[2:]] or [16, 32, 64, 128, 256]
TOP = 4


@contextlib.contextmanager
def pdl_forced(module):
    saved = module.pdl_on
    module.pdl_on = lambda device, rows=1: True
    try:
        yield
    finally:
        module.pdl_on = saved


def fp8_arms(x, qws):
    xq, xs = fp8_gemm.quantize_linear_input(x, qws[0])
    tile = {(bm, bn, s): [lambda q=q, t=(bm, bn, 4, 4, s):
                          fp8_gemm._launch(xq, xs, q, xq, 1, True, *t) for q in qws]
            for bm in (16, 32, 64) if bm <= max(16, x.shape[0])
            for bn in (32, 64, 128) for s in (1, 2, 4, 8) if qws[0].in_features // 128 >= 2 * s}
    fixed = {"route": [lambda q=q: fp8_gemm.fp8_block_matmul(xq, xs, q) for q in qws],
             "scaled_mm": [lambda q=q: fp8_gemm.fp8_block_matmul(xq, xs, q, scaled_mm=True)
                           for q in qws]}
    return tile, fixed


def int8_arms(x, qws):
    xq, xs = int8_quantize_activation(x)
    tile = {(bm, bn, s): [lambda q=q, t=(bm, bn, 4, 4, s): int8_gemm.int8_matmul(xq, xs, q, tiles=t)
                          for q in qws]
            for bm in (16, 32, 64) if bm <= max(16, x.shape[0])
            for bn in (32, 64, 128) for s in (1, 2, 4, 8) if qws[0].in_features // 128 >= 2 * s}
    return tile, {"route": [lambda q=q: int8_gemm.int8_matmul(xq, xs, q) for q in qws]}


SCHEMES = {"FP8": ("fp8-block", fp8_arms, fp8_gemm), "INT8": ("int8", int8_arms, int8_gemm)}


def rel(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30)).item()


def timed(fns):
    try:
        return graph_us(fns, calls=STEP_CALLS)
    except Exception as e:  # a tile that does not build (shared memory) is reported, not fatal
        print(f"  failed: {type(e).__name__}: {str(e)[:120]}", flush=True)
        return float("inf")


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        for name, (scheme_name, arms, module) in SCHEMES.items():
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
            for rows in TOKENS:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                tile, fixed = arms(x, qws)
                ref = fixed["route"][0]()
                sweep = {t: timed(f) for t, f in tile.items()}
                ranked = sorted(sweep, key=sweep.get)
                print(f"{name} {label} {rows}x{n}x{k} sweep (bm, bn, split): " + ", ".join(
                    f"{t}={sweep[t]:.2f}" for t in ranked), flush=True)
                best = ranked[:TOP]
                for t in best:
                    d = rel(tile[t][0]()[:rows], ref[:rows])
                    assert d < 1e-2, (name, label, rows, t, d)
                arms_now = {str(t): tile[t] for t in best}
                arms_now.update(fixed)
                arms_now["bf16"] = [lambda w=w: x @ w.t() for w in wbs]
                runs = []
                for _ in range(ROUNDS):
                    r = {a: timed(f) for a, f in arms_now.items()}
                    with pdl_forced(module):
                        r["pdl " + str(best[0])] = timed(tile[best[0]])
                    runs.append(r)
                med = {a: statistics.median(r[a] for r in runs) for a in runs[0]}
                bf16 = med["bf16"]
                print(f"{name} {label} {rows}x{n}x{k} medians of {ROUNDS}: " + ", ".join(
                    f"{a} {v:.2f} us ({bf16 / v:.2f}x bf16)" for a, v in
                    sorted(med.items(), key=lambda kv: kv[1])), flush=True)


if __name__ == "__main__":
    main()
