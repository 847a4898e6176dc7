"""Session 61: call 3's (tune --only dense) cells whose best tiles ran under 0.94x the rule's
time in its one round, re-timed against the rule in ROUNDS interleaved rounds (medians): the
GEMM alone, CUDA graphs of 10 calls, weights rotated past L2. Usage: confirm.py [ROUNDS]"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.fp8_gemm import dense_tiles as fp8_tiles, fp8_block_matmul
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.int8_gemm import dense_tiles as int8_tiles, int8_matmul
from qarl_kernels.int8_quantize import int8_quantize_activation

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
CELLS = [("INT8", "o_proj", m, [(16, 32, 4, 4, 4), (16, 64, 4, 4, 4)]) for m in (1, 8, 16)] + [
    ("INT8", "o_proj TP2", m, [(16, 32, 4, 4, 2)]) for m in (1, 8)] + [
    ("FP8", "qkv", m, [(16, 32, 4, 4, 8), (16, 64, 4, 4, 8)]) for m in (1, 8, 16)] + [
    ("FP8", "qkv", 32, [(32, 32, 4, 4, 4), (32, 32, 4, 4, 2)]),
    ("FP8", "o_proj", 32, [(32, 32, 4, 4, 8), (32, 32, 4, 4, 4)]),
    ("INT8", "qkv", 384, [(64, 128, 4, 4, 1)]), ("INT8", "qkv", 512, [(64, 128, 4, 4, 1)])]


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    dev = torch.device("cuda")
    for name, label, m, candidates in CELLS:
        n, k = next((n, k) for lbl, n, k in DENSE_SHAPES if lbl == label)
        scheme = get_scheme("fp8-block" if name == "FP8" else "int8")
        qws = [scheme.quantize_weight(torch.randn(n, k, device="cuda") * 0.02)
               for _ in range(copies_for(n * k))]
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        if name == "FP8":
            xq, xs = fp8_quantize_activation(x)
            call, rule = (lambda q, t: fp8_block_matmul(xq, xs, q, tiles=t)), fp8_tiles(m, n, k, dev)
        else:
            xq, xs = int8_quantize_activation(x)
            call, rule = (lambda q, t: int8_matmul(xq, xs, q, tiles=t)), int8_tiles(m, n, k, dev)
        arms = [rule] + candidates
        runs = [{t: graph_us([lambda q=q, t=t: call(q, t) for q in qws], calls=STEP_CALLS)
                 for t in arms} for _ in range(ROUNDS)]
        med = {t: statistics.median(r[t] for r in runs) for t in arms}
        print(f"{name} {label} {m}x{n}x{k}: rule {rule} {med[rule]:.2f} us; " + "; ".join(
            f"{t} {med[t]:.2f} ({med[rule] / med[t]:.2f}x the rule's speed)"
            for t in candidates), flush=True)
        del qws


if __name__ == "__main__":
    main()
