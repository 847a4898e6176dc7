"""Session 46, call 4: the INT8 row quantizer (kernels/int8_quantize.py) with rows a program x
warps, a row of up to 2048 values now read once. Each shape: activations (bf16), the SwiGLU
of fc1's output (no-grad experts), the master weights (fp32, NaN/inf counted); every tile
checked for the bits of the 1-row default, timed in CUDA graphs (medians of 3 rounds)."""
import statistics
import time

import torch
import triton

from qarl_kernels import int8_quantize
from qarl_kernels.bench_setup import graph_us


def quantize(x, probs, k, nonfinite, block_rows, warps):
    m = x.shape[0]
    q = torch.empty(m, k, device=x.device, dtype=torch.int8)
    s = torch.empty(m, 1, device=x.device, dtype=torch.float32)
    block = min(triton.next_power_of_2(k), int8_quantize.ONE_PASS_K)
    int8_quantize._int8_rows_kernel[(triton.cdiv(m, block_rows),)](
        x, x if probs is None else probs, q, s, s if nonfinite is None else nonfinite, m, k,
        x.stride(0), q.stride(0), s.stride(0), BLOCK_R=block_rows, BLOCK=block,
        ONE_PASS=k <= block, SWIGLU=probs is not None, COUNT_NONFINITE=nonfinite is not None,
        SOFTWARE=False, num_warps=warps)
    return q, s


def sweep(name, x, probs, k, nonfinite, nbytes):
    want = quantize(x, probs, k, nonfinite, *int8_quantize.row_tiles(k)[::2])
    times = {}
    for block_rows in (1, 2, 4, 8, 16):
        for warps in (1, 2, 4, 8):
            if block_rows * min(triton.next_power_of_2(k), 2048) // (32 * warps) > 128:
                continue  # over 128 values a thread
            got = quantize(x, probs, k, nonfinite, block_rows, warps)
            if not all(torch.equal(a, b) for a, b in zip(got, want)):
                print(f"{name} {block_rows} rows {warps} warps: BITS DIFFER", flush=True)
                continue
            times[(block_rows, warps)] = statistics.median(graph_us([
                lambda b=block_rows, w=warps: quantize(x, probs, k, nonfinite, b, w)])
                for _ in range(3))
    default = int8_quantize.row_tiles(k)[::2]
    base = times[default]
    best = sorted(times, key=times.get)[:5]
    print(f"{name}: default {default} {base:.1f} us ({nbytes / base / 1e3:.0f} GB/s); best: "
          + ", ".join(f"{b} rows {w} warps {times[(b, w)]:.1f} us ({times[(b, w)] / base:.3f},"
                      f" {nbytes / times[(b, w)] / 1e3:.0f} GB/s)" for b, w in best)
          + " | all: " + " ".join(f"{b}/{w}:{t:.1f}" for (b, w), t in times.items()),
          flush=True)


def main():
    for rows, k in ((131072, 2048), (131072, 768), (32768, 2048), (4096, 2048), (64, 2048)):
        x = torch.randn(rows, k, device="cuda").bfloat16()
        sweep(f"activation {rows}x{k}", x, None, k, None, rows * k * 3 + rows * 4)
    for rows, ffn in ((16384, 768), (64, 768)):
        h = torch.randn(rows, 2 * ffn, device="cuda").bfloat16()
        probs = torch.rand(rows, device="cuda")
        sweep(f"swiglu {rows}x{ffn}", h, probs, ffn, None, rows * ffn * 5 + rows * 8)
    for experts, n, k in ((128, 1536, 2048), (128, 2048, 768)):
        w = torch.randn(experts * n, k, device="cuda")
        nonfinite = torch.zeros(1, device="cuda", dtype=torch.int32)
        sweep(f"weight {experts}x{n}x{k}", w, None, k, nonfinite, w.numel() * 5 + w.shape[0] * 4)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main()
