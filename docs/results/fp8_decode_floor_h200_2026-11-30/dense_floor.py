"""Session 61: where the FP8 and INT8 dense decode calls stand against the stream floor. At
attention's projections and their TP2 halves: the stream-only kernel (stream_floor.stream_words,
TMA boxes of 64 rows, PDL) over the same weight bytes (one byte a weight for both schemes), the
GEMM alone (activations quantized once), the activation quantizer alone, the op, and bf16; CUDA
graphs of 10 calls, weights rotated past L2, ROUNDS interleaved rounds, medians. Usage:
dense_floor.py [ROUNDS TOKENS...] (PYTHONPATH holds qarl_kernels)"""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.fp8_gemm import fp8_block_linear, fp8_block_matmul, quantize_linear_input
from qarl_kernels.int8_gemm import int8_linear, int8_matmul
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.stream_floor import BLOCK_N, stream_words

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
TOKENS = [int(t) for t in sys.argv[2:]] or [1, 16, 64, 128, 256]


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    fp8, int8 = get_scheme("fp8-block"), get_scheme("int8")
    for label, n, k in DENSE_SHAPES:
        copies = copies_for(n * k)
        masters = [torch.randn(n, k, device="cuda") * 0.02 for _ in range(copies)]
        f8 = [fp8.quantize_weight(w) for w in masters]
        i8 = [int8.quantize_weight(w) for w in masters]
        wbs = [w.bfloat16() for w in masters][:copies_for(2 * n * k)]
        out = torch.zeros(n // BLOCK_N, device="cuda", dtype=torch.int32)
        for m in TOKENS:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = quantize_linear_input(x, f8[0])
            xq8, xs8 = int8_quantize_activation(x)
            fns = {"floor": [lambda q=q: stream_words(q.data.view(torch.int32), out) for q in f8],
                   "bf16": [lambda w=w: x @ w.t() for w in wbs],
                   "FP8 op": [lambda q=q: fp8_block_linear(x, q) for q in f8],
                   "FP8 GEMM": [lambda q=q: fp8_block_matmul(xq, xs, q) for q in f8],
                   "FP8 quant": [lambda: quantize_linear_input(x, f8[0])],
                   "INT8 op": [lambda q=q: int8_linear(x, q) for q in i8],
                   "INT8 GEMM": [lambda q=q: int8_matmul(xq8, xs8, q) for q in i8],
                   "INT8 quant": [lambda: int8_quantize_activation(x)]}
            runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
                    for _ in range(ROUNDS)]
            med = {name: statistics.median(r[name] for r in runs) for name in fns}
            print(f"{label} {m}x{n}x{k} ({n * k / 1e6:.1f} MB a byte-weight): " + ", ".join(
                f"{name} {t:.2f}" for name, t in med.items()) + " us; GEMM / floor: FP8 "
                f"{med['FP8 GEMM'] / med['floor']:.2f}x, INT8 {med['INT8 GEMM'] / med['floor']:.2f}x;"
                f" bf16 / op: FP8 {med['bf16'] / med['FP8 op']:.2f}x, INT8 "
                f"{med['bf16'] / med['INT8 op']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
