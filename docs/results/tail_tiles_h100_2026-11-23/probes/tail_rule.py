"""Tail tiles (an expert's last row tile absorbs up to `tail` rows past block_m) against the
rule's tiles at EP8 around 64 and 128 rows per expert: 4 uniform routings, 2 skewed (0.5), the
balanced one; graphs of 10 calls; bits against the rule's tiles."""
import statistics, sys, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
scheme = get_scheme("w4a16")
import os
MS = [int(v) for v in os.environ.get("MS", "112,120,128,136,144").split(",")]
# CANDS: the candidate tiles, as a Python literal, e.g. "[(128, 128, 2, None, None, 16)]"
CANDS = eval(os.environ.get("CANDS", "None")) or [(64, 64, 3, None, None, 16),
                                                 (64, 64, 2, None, None, 16)]
CASES = {label: [(m, CANDS) for m in MS] for label in ("W13 EP8", "W2 EP8")}
bad = 0
for label, rows_cands in CASES.items():
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for m, cands in rows_cands:
        rows = m * TOP_K
        rule = gluon_tiles(rows, e, n, k) + (0, )
        routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(4)]
        routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
        routings.append(("bal", torch.full((e,), rows // e, dtype=torch.int32, device="cuda")))
        res = {c: {} for c in [rule] + cands}
        for name, counts in routings:
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            base = w4a16_grouped_gluon(x, q0, counts, *rule[:5])
            for c in res:
                y = w4a16_grouped_gluon(x, q0, counts, *c[:5], tail=c[5])
                same = torch.equal(y, base)
                bad += not same
                res[c][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(x, q, counts, *c[:5], tail=c[5])
                                          for q in qws], calls=STEP_CALLS), "" if same else "!")
        print(f"== {label} M={m}; busiest " + " ".join(f"{nm}:{int(c.max())}" for nm, c in routings), flush=True)
        for c, d in res.items():
            u = statistics.median(d[f"u{s}"][0] for s in range(4))
            sk = statistics.median(d[f"s{s}"][0] for s in range(2))
            print(f"  {str(c):32s} uniform {u:5.1f} us {_pct_copy(_expert_bytes(e, n, k, 128, rows, True), u, peak):4.1f}% "
                  f"skewed {sk:5.1f} | " + " ".join(f"{nm} {t:.1f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
print("bits differ in", bad, "cases")
