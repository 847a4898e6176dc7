"""Session 57, call 1: can the dense FP8 calls take the warp-specialized Gluon kernel
(fp8_grouped_ws with one expert) instead of cuBLAS's blockwise scaled_mm? At the attention
projections and the expert shape, 4096 and 16384 tokens: the GEMM alone on the same quantized
operands (each WS tile shape), then the op with the activation quantizer in the call, each
beside bf16; seven rounds interleaved in CUDA graphs of one call (as `bench --only fp8`),
medians, outputs compared first. Usage: dense_ws_probe.py (PYTHONPATH holds qarl_kernels)"""
import statistics
from types import SimpleNamespace

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.fp8_gemm import fp8_block_matmul, quantize_linear_input
from qarl_kernels.fp8_grouped_ws import fp8_grouped_ws

ROUNDS = 7
SHAPES = [("experts' shape", 1536, 2048), ("qkv", 5120, 2048), ("o_proj", 2048, 4096)]
TILES = [(128, 4), (256, 3)]


def rounds_of(fns: dict) -> dict:
    runs = [{name: graph_us([fn]) for name, fn in fns.items()} for _ in range(ROUNDS)]
    return {name: statistics.median(r[name] for r in runs) for name in fns}, runs


def report(label, fns):
    med, runs = rounds_of(fns)
    bf16 = med["bf16"]
    cells = ", ".join(f"{name} {t:.1f} us ({bf16 / t:.2f}x)" for name, t in med.items()
                      if name != "bf16")
    print(f"{label}: bf16 {bf16:.1f} us; {cells}", flush=True)
    for name in fns:
        if name != "bf16":
            print(f"    {name} by round: " + " ".join(f"{r['bf16'] / r[name]:.2f}" for r in runs))


def main():
    print(torch.cuda.get_device_name(), flush=True)
    scheme = get_scheme("fp8-block")
    for label, n, k in SHAPES:
        w = torch.randn(n, k, device="cuda")
        qw, wb = scheme.quantize_weight(w), w.bfloat16()
        one = SimpleNamespace(data=qw.data[None], scale=qw.scale[None], in_features=k)
        for m in (4096, 16384):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = quantize_linear_input(x, qw)
            counts = torch.tensor([m], device="cuda", dtype=torch.int32)
            ref = fp8_block_matmul(xq, xs, qw, scaled_mm=True)
            gemm = {"bf16": lambda: x @ wb.t(),
                    "cuBLAS": lambda: fp8_block_matmul(xq, xs, qw, scaled_mm=True)}
            op = {"bf16": gemm["bf16"],
                  "cuBLAS": lambda: fp8_block_matmul(*quantize_linear_input(x, qw), qw, True)}
            for tiles in TILES:
                name = f"WS {tiles[0]}/{tiles[1]}"
                got = fp8_grouped_ws(xq, xs, one, counts, tiles)
                diff = (got.float() - ref.float()).abs().max().item()
                print(f"{label} {m}x{n}x{k} {name}: bitwise equal to cuBLAS "
                      f"{torch.equal(got, ref)}, max |diff| {diff:.3g}", flush=True)
                gemm[name] = lambda t=tiles: fp8_grouped_ws(xq, xs, one, counts, t)
                op[name] = lambda t=tiles: fp8_grouped_ws(*quantize_linear_input(x, qw), one,
                                                          counts, t)
            report(f"GEMM alone {label} {m}x{n}x{k}", gemm)
            report(f"with the quantizer {label} {m}x{n}x{k}", op)


if __name__ == "__main__":
    main()
