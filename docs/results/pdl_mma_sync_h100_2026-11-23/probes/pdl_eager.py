"""PDL on/off for eager calls (do_bench, as the Kernels table's 'W4A16 kernel us' column) and
graphs of 10 calls, where the eager rule takes the Gluon kernel (64+ tokens per expert at
E128), alternating 3 rounds."""
import statistics
import torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, median_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
for label, m in [("W2 E128", 1024), ("W2 E128", 512), ("W13 E128", 1024), ("W13 TP2", 1024),
                 ("W2 E128", 64), ("W13 EP8", 64)]:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    counts = route(m, e, TOP_K)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    tiles = gluon_tiles(m * TOP_K, e, n, k, capturing=False) or gluon_tiles(m * TOP_K, e, n, k)
    res = {(mode, p): [] for mode in ("eager", "graph") for p in (False, True)}
    for _ in range(3):
        for p in (False, True):
            fns = [lambda q=q, p=p: w4a16_grouped_gluon(x, q, counts, *tiles, pdl=p) for q in qws]
            res[("eager", p)].append(median_us(fns))
            res[("graph", p)].append(graph_us(fns, calls=STEP_CALLS))
    print(f"{label} M={m} {tiles}: " + " | ".join(
        f"{mode} pdl={p}: " + " ".join(f"{v:.1f}" for v in vals)
        for (mode, p), vals in res.items()), flush=True)
    del qws
