"""Session 28: host cost of eager W4A16 / FP8 grouped calls, the kernels at 6afdd4e
(qarl_kernels_old) against this tree's, alternating, same weights and batches."""
import time

import torch

import qarl_kernels.fp8_gemm as new_fp8
import qarl_kernels.w4a16_gemm as new
import qarl_kernels_old.fp8_gemm as old_fp8
import qarl_kernels_old.w4a16_gemm as old
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import route
from qarl_kernels.fp8_quantize import fp8_block_quantize


def wall_us(fn, calls=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / calls * 1e6


w4, fp8 = get_scheme("w4a16"), get_scheme("fp8-block")
for label, e, n, k in (("W13 E128", 128, 1536, 2048), ("W2 EP8", 16, 2048, 768)):
    q = w4.quantize_weight(torch.randn(e, n, k, device="cuda"))
    f = fp8_block_quantize(torch.randn(e, n, k, device="cuda"), fp8)
    for m in (1, 8, 64, 1024):
        counts = route(m, e, 8)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        rows = []
        for rep in range(2):
            for name, mod in (("old", old), ("new", new)):
                rows.append((name, wall_us(lambda: mod.w4a16_grouped_matmul(x, q, counts))))
            for name, mod in (("old fp8", old_fp8), ("new fp8", new_fp8)):
                rows.append((name, wall_us(lambda: mod.fp8_block_grouped_linear(x, f, counts))))
        print(f"{label} M={m}: " + ", ".join(f"{a} {b:.1f}" for a, b in rows), flush=True)
