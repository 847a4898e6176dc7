"""Session 56: W13 EP8 M=16384, the FP8 GEMM alone and bf16 torch._grouped_mm, timed in CUDA
graphs over short and long runs (20 and 200 replays, alternating): does a long run's clock
(power) fall, and does it move their ratio? (PYTHONPATH holds qarl_kernels)"""
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us, route
from qarl_kernels.fp8_grouped_ws import fp8_grouped_ws
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation

E, N, K = 16, 1536, 2048

w = torch.randn(E, N, K, device="cuda")
qw = fp8_block_quantize(w, get_scheme("fp8-block"))
wb = w.bfloat16().transpose(1, 2)
counts = route(16384, E, 8)
x = torch.randn(int(counts.sum()), K, device="cuda", dtype=torch.bfloat16)
offs = torch.cumsum(counts, 0, dtype=torch.int32)
xq, xs = fp8_quantize_activation(x)
for replays in (20, 200, 20, 200, 600):
    t8 = graph_us([lambda: fp8_grouped_ws(xq, xs, qw, counts)], replays)
    tb = graph_us([lambda: torch._grouped_mm(x, wb, offs=offs)], replays)
    print(f"{replays} replays: fp8 GEMM {t8:.1f} us, bf16 {tb:.1f} us, ratio {tb / t8:.3f}",
          flush=True)
