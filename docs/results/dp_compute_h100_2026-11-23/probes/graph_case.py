"""One W4A16 grouped decode call at EP8 under DP attention (M tokens top-8 over 16 experts),
or with BATCH=1 the decode batch (M tokens top-8 over 128 experts, the 16 of one rank),
captured in a CUDA graph as the bench and an engine run it, replayed for Nsight Compute.
Usage: [BATCH=1] python graph_case.py SHAPE M   (SHAPE: W13 or W2)."""
import os
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import route
from qarl_kernels.w4a16_gemm import gluon_tiles, w4a16_grouped_matmul
from qarl_kernels.w4a16_quantize import w4a16_quantize

shape, tokens = sys.argv[1], int(sys.argv[2])
e, (n, k) = 16, {"W13": (1536, 2048), "W2": (2048, 768)}[shape]
qweight = w4a16_quantize(torch.randn(e, n, k, device="cuda"), get_scheme("w4a16"))
counts = route(tokens, 128, 8, local=e) if os.environ.get("BATCH") else route(tokens, e, 8)
rows = int(counts.sum())
x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
reading = ", the decode batch" if os.environ.get("BATCH") else ""
print(f"{shape} EP8{reading} M={tokens}: rows {rows}, busiest expert {int(counts.max())}, "
      f"tiles (block_m, block_n, stages, maxnreg, ctas_per_sm) {gluon_tiles(rows, e, n, k)}")
stream = torch.cuda.Stream()
with torch.cuda.stream(stream):
    w4a16_grouped_matmul(x, qweight, counts)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        y = w4a16_grouped_matmul(x, qweight, counts)
for _ in range(3):
    graph.replay()
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(100):
    graph.replay()
end.record()
torch.cuda.synchronize()
print(f"  {start.elapsed_time(end) * 10:.1f} us a call (one call a graph, 100 replays)")
