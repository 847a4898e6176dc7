"""Session 45, call 7: the FP8 quantizers rounded to e4m3 in software on the GPU too
(fp8_quantize._e4m3 of 4f97b52: to_e4m3(..., True)). At EP8's training sizes the activation
quantizer moves ~2.0 TB/s on the H200, under half its copy bandwidth, so it is bound by its
~35 instructions an element. The tree's fp8_quantize ("hardware") converts with the GPU's
cvt.rn.satfinite instead, against 4f97b52's beside this script ("software":
fp8_quantize_sw.py, `git show 4f97b52:kernels/fp8_quantize.py | sed 's/^from \\./from
qarl_kernels./'`). Checked here:
  - codes and scales of both against each other and the torch reference for every finite bf16
    value at or under each of a set of block maxima (so every e4m3 code, subnormals and ties
    included, and the -0 of tiny negatives), and on large random batches;
  - time of both (CUDA graphs, balanced order) at the grouped GEMM's row counts.
Usage: e4m3.py REPEATS"""
import statistics
import sys
import time

import torch

import fp8_quantize_sw as sw
from megatron_qarl.quant.fp8_block import quantize_activation
from qarl_kernels import fp8_quantize as hw
from qarl_kernels.bench_setup import graph_us


def every_bf16_under(amax: float) -> torch.Tensor:
    """Rows of 128: each starts with amax, then finite bf16 values of magnitude <= amax (all
    of them, both signs), so every row's scale is amax's."""
    amax = float(torch.tensor(amax).bfloat16())  # a bf16 value, so the head is the max
    bits = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16)
    values = bits.view(torch.bfloat16).float()
    values = values[torch.isfinite(values) & (values.abs() <= amax)]
    per_row = 127
    pad = (-values.numel()) % per_row
    values = torch.cat([values, torch.zeros(pad)]).reshape(-1, per_row)
    head = torch.full((values.shape[0], 1), amax)
    return torch.cat([head, values], 1).bfloat16().cuda()


def same(x: torch.Tensor, label: str) -> bool:
    q_sw, s_sw = sw.fp8_quantize_activation(x)
    q_hw, s_hw = hw.fp8_quantize_activation(x)
    q_ref, s_ref = quantize_activation(x)
    ok = {"hw == sw codes": torch.equal(q_hw.view(torch.uint8), q_sw.view(torch.uint8)),
          "hw == sw scales": torch.equal(s_hw, s_sw),
          "hw == torch codes": torch.equal(q_hw.view(torch.uint8), q_ref.view(torch.uint8)),
          "hw == torch scales": torch.equal(s_hw, s_ref)}
    diff = int((q_hw.view(torch.uint8) != q_sw.view(torch.uint8)).sum())
    print(f"{label}: {tuple(x.shape)} " + ", ".join(f"{k} {v}" for k, v in ok.items())
          + f" ({diff} codes differ)", flush=True)
    return all(ok.values())


def main(repeats):
    all_ok = True
    for amax in (448.0, 1.0, 3.0e-3, 1.7e-5, 1e-10, 5e-11, 2.0e4):
        all_ok &= same(every_bf16_under(amax), f"every bf16 value under {amax:g}")
    g = torch.Generator(device="cuda").manual_seed(0)
    for rows, k, spread in ((32768, 2048, 1.0), (131072, 768, 1.0), (4096, 2048, 1e-6),
                            (4096, 2048, 1e3)):
        x = (torch.randn(rows, k, device="cuda", generator=g) * spread).bfloat16()
        x[::7, ::13] *= 64  # uneven blocks: many codes far under the block's max
        all_ok &= same(x, f"random x{spread:g}")
    print(f"all equal: {all_ok}", flush=True)
    for rows, k in ((4096, 2048), (32768, 2048), (131072, 2048), (32768, 768), (131072, 768)):
        x = torch.randn(rows, k, device="cuda").bfloat16()
        cells = {"software": lambda: graph_us([lambda: sw.fp8_quantize_activation(x)]),
                 "hardware": lambda: graph_us([lambda: hw.fp8_quantize_activation(x)])}
        times = {name: [] for name in cells}
        for _ in range(repeats):
            for name in list(cells) + list(reversed(cells)):
                times[name].append(cells[name]())
        med = {name: statistics.median(t) for name, t in times.items()}
        nbytes = rows * k * 3 + rows * (k // 128) * 4
        print(f"{rows}x{k}: " + ", ".join(
            f"{n} {m:.1f} us ({nbytes / m / 1e3:.0f} GB/s; {' '.join(f'{v:.1f}' for v in times[n])})"
            for n, m in med.items()) + f" | hardware/software {med['hardware'] / med['software']:.3f}",
            flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    main(int(sys.argv[1]))
