"""Why the tail-capable kernel is slower on tiles that take no tail: the plain kernel (tail 0),
the tail kernel, and the tail kernel without the tail's x boxes (wrong where a tile has a tail:
timed on the balanced routing only)."""
import shutil, statistics, torch
shutil.copy(".gpu/r16/w4g_noload.py", "kernels/_w4g_noload.py")
from qarl_kernels import _w4g_noload as noload
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
for label, m, tiles, tail in [("W13 EP8", 128, (64, 64, 3), 16), ("W13 EP8", 128, (64, 64, 2), 16),
                              ("W13 EP8", 64, (32, 64, 3), 16), ("W2 EP8", 128, (64, 64, 2), 16)]:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rows = m * TOP_K
    for name, counts in [("bal", torch.full((e,), rows // e, dtype=torch.int32, device="cuda")),
                         ("u0", route(m, e, TOP_K, seed=0)), ("u1", route(m, e, TOP_K, seed=1))]:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        out = []
        for vname, fn, t in [("plain", w4a16_grouped_gluon, 0), ("tail", w4a16_grouped_gluon, tail),
                             ("tail,no tail loads", noload.w4a16_grouped_gluon, tail),
                             ("plain again", w4a16_grouped_gluon, 0)]:
            us = graph_us([lambda q=q: fn(x, q, counts, *tiles, tail=t) for q in qws], calls=STEP_CALLS)
            out.append(f"{vname} {us:.1f}")
        print(f"{label} M={m} {tiles} {name} busiest {int(counts.max())}: " + " | ".join(out), flush=True)
