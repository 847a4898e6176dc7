"""Session 53: the FP8 weight quantizer on one Qwen3-30B-A3B layer's W2 (128 experts of
2048 x 768 bf16) in three layouts: stacked; per-expert allocations (a Parameter each, no
distributed optimizer); views of one buffer in Megatron DDP's order (reverse, each expert's
fc1 master between its fc2 and the next expert's, as with the distributed optimizer). Each is
checked against the stacked result and timed in CUDA graphs of 10 calls; with LAUNCHES, not
timed but run LAUNCHES times each for a profiler to pick (after the 4 launches of the checks:
stacked, separate, buffer, in that order).
Usage: fp8_w2_layouts.py [LAUNCHES] (PYTHONPATH holds qarl_kernels)"""
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.fp8_quantize import fp8_block_quantize

E, N, K, FC1 = 128, 2048, 768, 1536 * 2048


def layouts():
    torch.manual_seed(0)
    separate = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(E)]
    stacked = torch.stack(separate)
    buffer = torch.zeros(E * (N * K + FC1), device="cuda", dtype=torch.bfloat16)
    in_buffer = []
    for e in range(E):  # reverse: expert E-1's fc2 first, then its fc1, then expert E-2's fc2
        start = (E - 1 - e) * (N * K + FC1)
        in_buffer.append(buffer[start:start + N * K].view(N, K))
        in_buffer[-1].copy_(separate[e])
    return {"stacked": stacked, "separate": separate, "buffer": in_buffer}


def main():
    launches = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    scheme = get_scheme("fp8-block")
    cases = layouts()
    want = fp8_block_quantize(cases["stacked"], scheme, check_finite=False)
    gbytes = E * N * K * 3 / 1e3
    a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
    copy = 2 * a.numel() / graph_us([lambda: torch.empty_like(a).copy_(a)], 20, 10) / 1e3
    print(torch.cuda.get_device_name(), f"copy {copy:.0f} GB/s", flush=True)
    for name, w in cases.items():
        got = fp8_block_quantize(w, scheme, check_finite=False)
        assert torch.equal(got.data.view(torch.uint8), want.data.view(torch.uint8)), name
        if launches:
            continue
        t = graph_us([lambda: fp8_block_quantize(w, scheme, check_finite=False)], 40, 10)
        print(f"{name}: {t:.1f} us ({100 * gbytes / copy / t:.1f}% of copy)", flush=True)
    torch.cuda.synchronize()
    for name, w in cases.items():
        for _ in range(launches):
            fp8_block_quantize(w, scheme, check_finite=False)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
