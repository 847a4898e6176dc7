"""L2 prefetch of the weight words PF blocks ahead (_w4g_pf2, PF from the environment) at the
rule's tiles: seeds 0 and 1 uniform, graphs of 10 calls, us; and the output against PF=0's."""
import os
import sys
import torch
sys.path.insert(0, ".gpu")  # where probes/make_pf.py writes _w4g_pf2.py
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_x_async
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import _w4g_pf2 as pf

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
CASES = [("W13 EP8", m) for m in (8, 64, 128)] + [("W2 EP8", m) for m in (8, 64)] + [
    ("W13 E128", m) for m in (8, 64)] + [("W2 E128", m) for m in (8, 64)] + [
    ("W13 TP2", m) for m in (8, 64)]
scheme = get_scheme("w4a16")
weights = {}
for label, m in CASES:
    e, n, k = SHAPES[label]
    if label not in weights:
        weights.clear()
        torch.manual_seed(0)
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    qws = weights[label]
    rows = m * TOP_K
    tiles = gluon_tiles(rows, e, n, k)
    xa = gluon_x_async(rows, e, n, k)
    ts = []
    for seed in (0, 1):
        counts = route(m, e, TOP_K, seed=seed)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        y = pf.w4a16_grouped_gluon(x, qws[0], counts, *tiles, x_async=xa)
        ts.append(graph_us([lambda q=q: pf.w4a16_grouped_gluon(x, q, counts, *tiles, x_async=xa)
                            for q in qws], calls=STEP_CALLS))
        torch.save(y.cpu(), f"/tmp/pf_{label.replace(' ', '_')}_{m}_{seed}_{pf.PF}.pt")
    same = all(torch.equal(torch.load(f"/tmp/pf_{label.replace(' ', '_')}_{m}_{s}_{pf.PF}.pt"),
                           torch.load(f"/tmp/pf_{label.replace(' ', '_')}_{m}_{s}_0.pt"))
               for s in (0, 1)) if os.path.exists(f"/tmp/pf_{label.replace(' ', '_')}_{m}_0_0.pt") else "n/a"
    print(f"PF={pf.PF} {label} M={m} {tiles}: " + " ".join(f"{t:.1f}" for t in ts)
          + f" same bits as PF=0: {same}", flush=True)
