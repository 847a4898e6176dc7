"""Upper bound on what the x loads cost at decode sizes: the rule's tiles with x brought in
by TMA (X_ON=1) and with no x loads at all (X_ON=0: the wgmmas read stale shared memory, wrong
numbers). Graphs of 10 calls, seeds 0-1 uniform, us."""
import os
import subprocess
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import _w4g_nox as nox

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
for label, m in [("W13 TP2", 8), ("W2 E128", 8), ("W13 E128", 8), ("W13 EP8", 8), ("W2 EP8", 8),
                 ("W13 EP8", 64), ("W13 TP2", 64), ("W13 E128", 64), ("W13 TP2", 1)]:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rule = gluon_tiles(m * TOP_K, e, n, k)
    out = []
    for seed in (0, 1):
        counts = route(m, e, TOP_K, seed=seed)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        if True:
            out.append(f"s{seed} x{os.environ.get('X_ON', 1)} {graph_us([lambda q=q: nox.w4a16_grouped_gluon(x, q, counts, *rule) for q in qws], calls=STEP_CALLS):.1f}")
    print(f"{label} M={m} {rule}: " + " | ".join(out), flush=True)
