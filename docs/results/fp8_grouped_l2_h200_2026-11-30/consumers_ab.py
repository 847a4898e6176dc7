"""Session 56: the FP8 grouped GEMM with three consumer warpgroups (128-wide tiles of 192
rows) against two (256- and 128-wide tiles of 128 rows) and against the kernel before this
round (qarl_kernels_old): every case's output first checked bit for bit against the old
kernel's, then the tile choices timed in CUDA graphs of ROUNDS interleaved short runs (20
replays each, so slow clock changes under load fall on every choice alike), each the median.
(PYTHONPATH holds qarl_kernels and qarl_kernels_old)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import GROUPED_SHAPES, TOP_K
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.fp8_grouped_ws import fp8_grouped_ws
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation
from qarl_kernels_old.fp8_grouped_ws import fp8_grouped_ws as old_ws

ROUNDS = 7
TILES = [(256, 3, 2), (128, 4, 2), (128, 4, 3), (128, 3, 3), (128, 2, 3)]

print(torch.cuda.get_device_name(), flush=True)
for label, e, n, k in GROUPED_SHAPES[:4]:
    qw = fp8_block_quantize(torch.randn(e, n, k, device="cuda"), get_scheme("fp8-block"))
    wb = torch.randn(e, k, n, device="cuda", dtype=torch.bfloat16)
    for tokens in (1024, 4096, 16384):
        counts = route(tokens, e, TOP_K)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        xq, xs = fp8_quantize_activation(x)
        want = old_ws(xq, xs, qw, counts)
        fns = {"old": lambda: old_ws(xq, xs, qw, counts),
               "bf16": lambda: torch._grouped_mm(x, wb, offs=offs)}
        for tiles in TILES:
            assert torch.equal(fp8_grouped_ws(xq, xs, qw, counts, tiles), want), (label, tiles)
            fns["{}/{}/{}".format(*tiles)] = (lambda t=tiles: fp8_grouped_ws(xq, xs, qw, counts, t))
        times = {name: [] for name in fns}
        for _ in range(ROUNDS):
            for name, fn in fns.items():
                times[name].append(graph_us([fn], 20))
        med = {name: statistics.median(v) for name, v in times.items()}
        flop = 2 * xq.shape[0] * n * k
        print(f"{label} M={tokens}: " + ", ".join(
            f"{name} {t:.1f} us" + ("" if name == "bf16" else f" ({flop / t / 1e6:.0f} TFLOP/s, "
                                    f"{med['bf16'] / t:.2f}x bf16)") for name, t in med.items()),
              flush=True)
