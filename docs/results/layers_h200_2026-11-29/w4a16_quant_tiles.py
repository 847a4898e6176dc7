"""Session 46, call 8: the W4A16 quantize-and-pack kernel (kernels/w4a16_quantize.py) with rows
a program x warps, for one layer's experts (fp32 and bf16 masters, group 128). The default is
32 rows and 4 warps (72-74% of copy on the H200, call 7); every cell checked for the
default's bits, timed in CUDA graphs (medians of 3 rounds)."""
import statistics
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_quantize import w4a16_quantize


def main():
    scheme = get_scheme("w4a16")
    for name, shape in (("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))):
        for dtype in (torch.float32, torch.bfloat16):
            w = torch.randn(shape, device="cuda").to(dtype)
            want = w4a16_quantize(w, scheme, check_finite=False)
            nbytes = w.numel() * (w.element_size() + 0.5) + w.numel() // 128 * 2
            times = {}
            for rows in (8, 16, 32, 64):
                for warps in (1, 2, 4, 8):
                    got = w4a16_quantize(w, scheme, check_finite=False, block_rows=rows,
                                         num_warps=warps)
                    if not (torch.equal(got.data, want.data)
                            and torch.equal(got.scale, want.scale)):
                        print(f"{name} {dtype} {rows}/{warps}: BITS DIFFER", flush=True)
                        continue
                    times[(rows, warps)] = statistics.median(graph_us([
                        lambda r=rows, n=warps: w4a16_quantize(
                            w, scheme, check_finite=False, block_rows=r, num_warps=n)])
                        for _ in range(3))
            base = times[(32, 4)]
            best = sorted(times, key=times.get)[:5]
            print(f"{name} {dtype}: default 32/4 {base:.1f} us ({nbytes / base / 1e3:.0f} GB/s);"
                  " best: " + ", ".join(f"{r}/{n} {times[(r, n)]:.1f} us "
                                        f"({times[(r, n)] / base:.3f}, "
                                        f"{nbytes / times[(r, n)] / 1e3:.0f} GB/s)"
                                        for r, n in best)
                  + " | all: " + " ".join(f"{r}/{n}:{t:.1f}" for (r, n), t in times.items()),
                  flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main()
