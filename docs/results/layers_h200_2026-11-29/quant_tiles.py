"""Session 46, call 1 (written in session 45): the FP8 activation quantizer's program shape
once it rounds with the instruction (session 45, call 7). `_row_block` gives 16 rows and 4
warps a program from 33 rows, the fastest on the H100 when the rounding was in software (round
4's sweep). Here: rows a program x warps, each checked for the default's bits, timed in CUDA
graphs (medians of 3 rounds)."""
import statistics
import time

import torch
import triton

from megatron_qarl.quant.fp8_block import BLOCK, FP8_DTYPE
from qarl_kernels import fp8_quantize
from qarl_kernels.bench_setup import graph_us


def quantize(x, block_rows, warps):
    rows, k = x.shape
    q = torch.empty(rows, k, device=x.device, dtype=FP8_DTYPE)
    scale_t = torch.empty(triton.cdiv(k, BLOCK), rows, device=x.device, dtype=torch.float32)
    fp8_quantize._fp8_activation_kernel[(triton.cdiv(rows, block_rows), triton.cdiv(k, BLOCK))](
        x, q, scale_t, x, 0, rows, rows, k, x.stride(0), k, scale_t.stride(1),
        scale_t.stride(0), BLOCK_R=block_rows, BLOCK=BLOCK, E_PAD=1, ROUTED=False,
        num_warps=warps)
    return q, scale_t


def main():
    for rows, k in ((32768, 2048), (131072, 2048), (131072, 768), (4096, 2048)):
        x = torch.randn(rows, k, device="cuda").bfloat16()
        want_q, want_s = fp8_quantize.fp8_quantize_activation(x)
        times = {}
        for block_rows in (8, 16, 32, 64):
            for warps in (1, 2, 4, 8):
                q, s = quantize(x, block_rows, warps)
                if not (torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
                        and torch.equal(s.t(), want_s)):
                    print(f"{rows}x{k} {block_rows} rows {warps} warps: BITS DIFFER", flush=True)
                    continue
                times[(block_rows, warps)] = [graph_us([lambda b=block_rows, w=warps: quantize(
                    x, b, w)]) for _ in range(3)]
        med = {c: statistics.median(t) for c, t in times.items()}
        base = med[(16, 4)]
        nbytes = rows * k * 3 + rows * (k // 128) * 4
        best = sorted(med, key=med.get)[:5]
        print(f"{rows}x{k}: default (16 rows, 4 warps) {base:.1f} us ({nbytes / base / 1e3:.0f} "
              "GB/s); best: " + ", ".join(f"{b} rows {w} warps {med[(b, w)]:.1f} us "
                                          f"({med[(b, w)] / base:.3f})" for b, w in best)
              + " | all: " + " ".join(f"{b}/{w}:{m:.1f}" for (b, w), m in med.items()),
              flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main()
