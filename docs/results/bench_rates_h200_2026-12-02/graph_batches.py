"""Why the one-token W4A16 dense cells moved (o_proj TP2 M=1: 6.2 us in session 62's run, 3.6
in session 76's): each graph_us batch's time, in order, for bf16 and W4A16 at the dense table's
one-token shapes, the old statistic (one mean over 200 replays) beside the new (the median of
10 batch means), each measured three times in a row."""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench.measure import STEP_CALLS, _warm_up, copies_for
from qarl_kernels.w4a16_gemm import w4a16_linear
from qarl_kernels.w4a16_quantize import w4a16_quantize


def batches(fns, calls=STEP_CALLS, n=10, per=20):
    groups = [[fns[(i * calls + j) % len(fns)] for j in range(calls)] for i in range(len(fns))]
    _warm_up(fns)
    graphs = []
    for group in groups:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for fn in group:
                fn()
        graphs.append(g)
    for g in graphs:
        g.replay()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    torch.cuda.synchronize()
    ev[0].record()
    for b in range(n):
        for i in range(per):
            graphs[(b * per + i) % len(graphs)].replay()
        ev[b + 1].record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e3 / (per * calls) for a, b in zip(ev, ev[1:])]


scheme = get_scheme("w4a16-g128")
for label, n, k in [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
                    ("o_proj TP2", 2048, 2048)]:
    master = torch.randn(n, k, device="cuda")
    q4 = [w4a16_quantize(master + i, scheme) for i in range(copies_for(n * k // 2))]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
    for name, fns in (("bf16", [lambda w=w: x @ w.t() for w in wb]),
                      ("w4a16", [lambda q=q: w4a16_linear(x, q) for q in q4])):
        for rep in range(3):
            t = batches(fns)
            print(f"{label} M=1 {name} rep{rep}: mean {statistics.mean(t):.2f} median "
                  f"{statistics.median(t):.2f} batches " + " ".join(f"{v:.1f}" for v in t),
                  flush=True)
