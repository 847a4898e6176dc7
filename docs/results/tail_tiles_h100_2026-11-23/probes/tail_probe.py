"""Tail tiles at EP8: a tile holds block_m + tail token rows, the tail multiplied by a narrow
wgmma on the same unpacked weights, against the rule's tiles. Uniform routings (the bench's
4 seeds), 2 skewed (0.5) and the balanced one; graphs of 10 calls; bits against the rule."""
import os, statistics, sys, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_x_async
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
print(f"copy {peak['copy_GBps']:.0f} GB/s, bf16 {peak['bf16_TFLOPs']:.0f} TF/s", flush=True)
scheme = get_scheme("w4a16")
N_ = None
GRID = {
    ("W13 EP8", 64): [(32, 64, 3, N_, N_, 16), (32, 64, 4, N_, N_, 16), (32, 64, 3, N_, N_, 32)],
    ("W13 EP8", 128): [(64, 64, 2, N_, N_, 16), (64, 64, 3, N_, N_, 16), (64, 64, 4, N_, N_, 16),
                       (64, 64, 3, N_, N_, 32)],
    ("W13 EP8", 256): [(128, 64, 2, N_, N_, 32), (128, 64, 2, N_, N_, 16),
                       (64, 64, 2, N_, N_, 64), (64, 64, 3, N_, N_, 64)],
    ("W2 EP8", 64): [(32, 128, 3, N_, N_, 16), (32, 64, 3, N_, N_, 16)],
    ("W2 EP8", 128): [(64, 64, 2, N_, N_, 16), (64, 128, 2, N_, N_, 16), (64, 64, 3, N_, N_, 16),
                      (64, 64, 2, N_, N_, 32)],
    ("W2 EP8", 256): [(128, 64, 2, N_, N_, 32), (128, 64, 2, N_, N_, 16),
                      (64, 64, 2, N_, N_, 64)],
}
sel = os.environ.get("SET")
for (label, m), cands in GRID.items():
    if sel and f"{label} {m}" not in sel.split(","):
        continue
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rows = m * TOP_K
    rule = gluon_tiles(rows, e, n, k) + (0, )
    xa = gluon_x_async(rows, e, n, k)
    routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(4)]
    routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
    routings.append(("bal", torch.full((e,), rows // e, dtype=torch.int32, device="cuda")))
    cands = [rule] + [c for c in cands if c != rule]
    res = {c: {} for c in cands}
    bad = {}
    for name, counts in routings:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        ref = scheme.reference_grouped_matmul(x, q0, counts.cpu())
        base = w4a16_grouped_gluon(x, q0, counts, *rule[:5], x_async=xa)
        for c in cands:
            try:
                y = w4a16_grouped_gluon(x, q0, counts, *c[:5], x_async=xa and not c[5], tail=c[5])
            except Exception as err:
                print("fail", c, str(err).splitlines()[0][:300], flush=True); bad[c] = "fail"; continue
            if not torch.equal(y, base):
                err = (y.float() - ref.float()).abs().max().item()
                bad[c] = f"BITS DIFFER ({name}: max err vs ref {err:.3g}, rule's {(base.float() - ref.float()).abs().max().item():.3g})"
            res[c][name] = graph_us([lambda q=q, c=c: w4a16_grouped_gluon(
                x, q, counts, *c[:5], x_async=xa and not c[5], tail=c[5]) for q in qws],
                calls=STEP_CALLS)
    touched = e
    def pct(t):
        return _pct_copy(_expert_bytes(touched, n, k, 128, rows, True), t, peak)
    print(f"== {label} M={m} rule {rule}; busiest per routing: "
          + " ".join(f"{nm}:{int(c.max())}" for nm, c in routings), flush=True)
    for c in cands:
        if not res[c]:
            continue
        u = [res[c][f"u{s}"] for s in range(4) if f"u{s}" in res[c]]
        med = statistics.median(u)
        print(f"  {c}: uniform median {med:.1f} us ({min(u):.1f}-{max(u):.1f}) {pct(med):.1f}% "
              f"{2 * rows * n * k / med / 1e6:.0f} TF/s; "
              + " ".join(f"{nm} {t:.1f}" for nm, t in res[c].items())
              + (f"  {bad[c]}" if c in bad else ""), flush=True)
    del qws
