"""Tail tiles in the fused fc1 + SwiGLU (what decode runs for W13) at EP8: the rule's tiles
(gluon_swiglu_tiles) against tail variants; 4 uniform routings, 2 skewed, balanced; graphs
of 10 calls; bits against the rule's."""
import os, statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_swiglu_tiles, gluon_x_async
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
e, n, k = SHAPES["W13 EP8"]
master = torch.randn(e, n, k, device="cuda")
q0 = w4a16_quantize(master, scheme)
qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
    1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
N_ = None
CANDS = [(32, 64, 3, N_, N_, 16), (32, 64, 4, N_, N_, 16), (32, 64, 3, 160, N_, 16),
         (64, 64, 2, N_, N_, 16), (16, 64, 3, N_, N_, 16)]
bad = 0
for m in [int(v) for v in os.environ.get("MS", "64,96,120,128,136,160").split(",")]:
    rows = m * TOP_K
    rule = gluon_swiglu_tiles(rows, e, n, k) + (None, 0)
    xa = gluon_x_async(rows, e, n, k, swiglu=True)
    routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(4)]
    routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
    routings.append(("bal", torch.full((e,), rows // e, dtype=torch.int32, device="cuda")))
    res = {c: {} for c in [rule] + CANDS}
    for name, counts in routings:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(rows, device="cuda")
        base = w4a16_grouped_gluon(x, q0, counts, *rule[:5], swiglu=True, probs=probs, x_async=xa)
        for c in res:
            kw = dict(swiglu=True, probs=probs, x_async=xa and not c[5], tail=c[5])
            y = w4a16_grouped_gluon(x, q0, counts, *c[:5], **kw)
            same = torch.equal(y, base)
            bad += not same
            res[c][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(x, q, counts, *c[:5], **kw)
                                      for q in qws], calls=STEP_CALLS), "" if same else "!")
    print(f"== fused W13 EP8 M={m}; busiest " + " ".join(f"{nm}:{int(c.max())}" for nm, c in routings), flush=True)
    for c, d in res.items():
        u = statistics.median(d[f"u{s}"][0] for s in range(4))
        sk = statistics.median(d[f"s{s}"][0] for s in range(2))
        print(f"  {str(c):32s} uniform {u:5.1f} us skewed {sk:5.1f} | "
              + " ".join(f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
print("bits differ in", bad, "cases")
