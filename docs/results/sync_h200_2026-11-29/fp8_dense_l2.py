"""Session 49, call 8: why the FP8 dense call at training sizes (bench --only fp8, call 7) can
take longer than its quantizer's and GEMM's columns added (qkv 4096 x 5120 x 2048: 109.6 us
against 10.3 + 82.0). Each column in CUDA graphs of one call, as the bench times them, once with
one input (what the bench does) and once rotating over input copies past L2 (the activation x,
its codes and scales, the weight); the call itself both ways."""
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import copies_for, graph_us
from qarl_kernels.fp8_gemm import fp8_block_linear, fp8_block_matmul, quantize_linear_input

SHAPES = [("qkv", 4096, 5120, 2048), ("o_proj", 4096, 2048, 4096), ("", 4096, 1536, 2048),
          ("qkv", 16384, 5120, 2048)]


def main():
    print(torch.cuda.get_device_name(), flush=True)
    scheme = get_scheme("fp8-block")
    for label, m, n, k in SHAPES:
        n_copies = max(copies_for(m * k * 2), copies_for(n * k))
        ws = [scheme.quantize_weight(torch.randn(n, k, device="cuda")) for _ in range(n_copies)]
        wbs = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(n_copies)]
        xs = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(n_copies)]
        qs = [quantize_linear_input(x, ws[0]) for x in xs]
        row = {}
        for mode, count in (("one input", 1), (f"{n_copies} copies", n_copies)):
            idx = range(count)
            row[mode] = [
                graph_us([lambda i=i: fp8_block_linear(xs[i], ws[i]) for i in idx]),
                graph_us([lambda i=i: quantize_linear_input(xs[i], ws[0]) for i in idx]),
                graph_us([lambda i=i: fp8_block_matmul(*qs[i], ws[i]) for i in idx]),
                graph_us([lambda i=i: xs[i] @ wbs[i].t() for i in idx])]
        for mode, (call, quant, gemm, bf16) in row.items():
            print(f"{label} {m}x{n}x{k} {mode}: call {call:.1f} us, quantizer {quant:.1f} + "
                  f"GEMM {gemm:.1f} = {quant + gemm:.1f} us, bf16 {bf16:.1f} us, "
                  f"bf16 / call {bf16 / call:.2f}", flush=True)
        del ws, wbs, xs, qs


if __name__ == "__main__":
    main()
