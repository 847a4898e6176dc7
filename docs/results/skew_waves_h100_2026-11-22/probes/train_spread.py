"""Training-size batches (M = 4096, 16384) over 4 seeds, uniform and skewed routing: bf16
torch._grouped_mm, the registered W4A16 op (w4a16_grouped_linear) with the operand kept, and
the FP8 grouped GEMM alone (on quantized activations) and with its activation quantizer. CUDA
graphs, one call each."""
import dataclasses

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import GROUPED_SHAPES, TOP_K, _fp8_weights
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.fp8_gemm import fp8_block_grouped_linear, fp8_block_grouped_matmul
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear
from qarl_kernels.w4a16_quantize import w4a16_quantize

fp8, w4 = get_scheme("fp8-block"), get_scheme("w4a16")
for label, e, n, k in GROUPED_SHAPES[:4]:
    qw8, wb = _fp8_weights(fp8, e, n, k)
    q4 = dataclasses.replace(w4a16_quantize(wb.float().transpose(1, 2).contiguous(), w4),
                             keep_operand=True)
    for m in (4096, 16384):
        for skew in (0.0, 0.5):
            rows_out = []
            for seed in range(4):
                counts = route(m, e, TOP_K, seed=seed, skew=skew)
                x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
                offs = torch.cumsum(counts, 0, dtype=torch.int32)
                xq, xs = fp8_quantize_activation(x)
                w4a16_grouped_linear(x, q4, counts)  # the kept operand made outside capture
                t = [graph_us([fn]) for fn in (
                    lambda: torch._grouped_mm(x, wb, offs=offs),
                    lambda: w4a16_grouped_linear(x, q4, counts),
                    lambda: fp8_block_grouped_matmul(xq, xs, qw8, counts),
                    lambda: fp8_block_grouped_linear(x, qw8, counts))]
                rows_out.append((int(counts.max()), t))
            print(f"{label} M={m} skew {skew}: " + "; ".join(
                f"max {b} bf16 {t[0]:.0f} kept {t[0] / t[1]:.2f}x fp8 {t[0] / t[2]:.2f}x "
                f"(+quant {t[0] / t[3]:.2f}x)" for b, t in rows_out), flush=True)
    del qw8, wb, q4
