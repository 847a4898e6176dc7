"""mma.sync (w4a16_mma_v2 probe) against the rule's wgmma kernel, decode rows, 4 uniform
routings (the bench's seeds), graphs of 10 calls: median us, range, %BW; error vs the rule."""
import os, statistics, sys
sys.path.insert(0, os.path.dirname(__file__))
import torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_x_async
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import w4a16_mma_v2 as v2

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
print(f"copy {peak['copy_GBps']:.0f} GB/s", flush=True)
scheme = get_scheme("w4a16")
def grid(bms, bns, sts, pers):
    return [(bm, bn, st, p, two) for bm in bms for bn in bns for st in sts for p in pers
            for two in (False, True)]
CASES = {
    ("W2 E128", 8): grid((8,), (128, 64), (3, 4), (3, 4, None)),
    ("W13 TP2", 8): grid((8,), (64, 128), (3, 4), (3, 5, None)),
    ("W13 EP8", 8): grid((8,), (64, 128), (3, 4, 6), (3, 4, None)),
    ("W2 EP8", 8): grid((8,), (64, 128), (3, 4), (3, None)),
    ("W13 E128", 8): grid((8, 16), (128, 64), (2, 3), (3, None)),
    ("W13 E128", 1): grid((8,), (64, 128), (3, 4), (None, 3)),
    ("W2 E128", 1): grid((8,), (64, 128), (3, 4), (None, 3)),
    ("W13 EP8", 64): grid((32, 64), (64,), (2, 3), (None,)),
    ("W2 E128", 64): grid((8, 16), (128,), (3,), (3, None)),
}
sel = os.environ.get("SET")
for (label, m), cands in CASES.items():
    if sel and f"{label} {m}" not in sel.split(","):
        continue
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rule = gluon_tiles(m * TOP_K, e, n, k)
    xa = gluon_x_async(m * TOP_K, e, n, k)
    res = {"rule": []}
    res.update({c: [] for c in cands})
    pct = {c: [] for c in res}
    err = {c: 0.0 for c in res}
    for seed in range(4):
        counts = route(m, e, TOP_K, seed=seed)
        rows, touched = int(counts.sum()), int((counts > 0).sum())
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        want = scheme.reference_grouped_matmul(x, qws[0], counts.cpu()).float()
        fns = {"rule": lambda q: w4a16_grouped_gluon(x, q, counts, *rule, x_async=xa)}
        for c in cands:
            fns[c] = lambda q, c=c: v2.run(x, q, counts, *c)
        for c, fn in fns.items():
            if c in err and err[c] is None:
                continue
            try:
                y = fn(qws[0]).float()
            except Exception as ex:
                print("skip", c, str(ex).splitlines()[0][:160], flush=True); err[c] = None; continue
            err[c] = max(err[c], float((y - want).norm() / want.norm()))
            t = graph_us([lambda q=q, fn=fn: fn(q) for q in qws], calls=STEP_CALLS)
            res[c].append(t)
            pct[c].append(_pct_copy(_expert_bytes(touched, n, k, 128, rows, True), t, peak))
    base = statistics.median(res["rule"])
    print(f"== {label} M={m} rule {rule} xa {xa}: {base:.1f} us ({min(res['rule']):.1f}-"
          f"{max(res['rule']):.1f}) {statistics.median(pct['rule']):.1f}% err {err['rule']:.2e}",
          flush=True)
    ranked = sorted((statistics.median(v), c) for c, v in res.items()
                    if c != "rule" and len(v) == 4)
    for t, c in ranked[:8]:
        print(f"  v2 {c}: {t:.1f} us ({min(res[c]):.1f}-{max(res[c]):.1f}) "
              f"{statistics.median(pct[c]):.1f}% {base / t:.3f}x err {err[c]:.2e}", flush=True)
    del qws
