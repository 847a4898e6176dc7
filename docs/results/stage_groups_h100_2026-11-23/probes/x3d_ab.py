"""x of a stage in one 3-D TMA box ([halves, rows, 64]) against one box per half (92ca20d's
kernel, .gpu/r17/_w4g_2d.py copied to kernels/_w4g_2d.py), the rule's tiles and groups, every
decode row, GEMM and fused fc1 + SwiGLU: 3 uniform, 2 skewed routings, graphs of 10 calls,
bits against the old kernel."""
import os, statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import (gluon_tiles, gluon_swiglu_tiles, gluon_x_async, gluon_tail,
                                     gluon_pdl, gluon_groups)
from qarl_kernels import w4a16_gluon as new, _w4g_2d as old
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
peak = ceilings()
scheme = get_scheme("w4a16")
MS = [int(v) for v in os.environ.get("MS", "1,8,16,32,64,128,256").split(",")]
bad = 0
for label, e, n, k in DECODE_SHAPES:
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for swiglu in ([False, True] if label.startswith("W13") else [False]):
        for m in MS:
            rows = m * TOP_K
            shape = (rows, e, n, k)
            tiles = gluon_swiglu_tiles(*shape) + (None,) if swiglu else gluon_tiles(*shape)
            if not tiles:
                continue
            kw = dict(x_async=gluon_x_async(*shape, swiglu=swiglu), pdl=gluon_pdl(rows),
                      tail=gluon_tail(*shape, swiglu=swiglu), swiglu=swiglu,
                      groups=gluon_groups(*shape, swiglu=swiglu))
            routings = [(f"u{s}", route(m, e, TOP_K, seed=s)) for s in range(3)]
            routings += [(f"s{s}", route(m, e, TOP_K, seed=s, skew=0.5)) for s in range(2)]
            res = {"2d": {}, "3d": {}}
            for name, counts in routings:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                base = old.w4a16_grouped_gluon(x, q0, counts, *tiles, **kw)
                y = new.w4a16_grouped_gluon(x, q0, counts, *tiles, **kw)
                bad += not torch.equal(y, base)
                for v, mod in (("2d", old), ("3d", new)):
                    res[v][name] = graph_us([lambda q=q, mod=mod: mod.w4a16_grouped_gluon(
                        x, q, counts, *tiles, **kw) for q in qws], calls=STEP_CALLS)
            u = {v: statistics.median(d[f"u{s}"] for s in range(3)) for v, d in res.items()}
            sk = {v: statistics.median(d[f"s{s}"] for s in range(2)) for v, d in res.items()}
            pct = _pct_copy(_expert_bytes(e if m >= 64 else min(e, rows), n, k, 128, rows, True),
                            u["3d"], peak) if not swiglu else float("nan")
            print(f"{label}{' fused' if swiglu else ''} M={m} {tiles} g{kw['groups']}: uniform "
                  f"{u['2d']:6.1f} -> {u['3d']:6.1f} us ({u['2d'] / u['3d']:4.2f}x), skewed "
                  f"{sk['2d']:6.1f} -> {sk['3d']:6.1f} ({sk['2d'] / sk['3d']:4.2f}x)", flush=True)
    del qws
print("bits differ in", bad, "cases")
