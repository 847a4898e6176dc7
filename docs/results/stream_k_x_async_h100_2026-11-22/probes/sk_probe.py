"""Where stream-K's time goes: the same grid with the fix-up off (FIXUP=0: partial tiles stored
as if whole, wrong numbers), write-only (1), full (2); and grids whose ranges are whole tiles
(no fix-up at all). Graphs of 10 calls, seed 0 uniform routing, us."""
import importlib
import sys
import torch
sys.path.insert(0, ".gpu")
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import _w4g_sk as sk

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
for label, m, tiles in [("W2 EP8", 8, (8, 128, 4, None, 3)), ("W2 E128", 8, (8, 128, 3, None, 3)),
                        ("W13 TP2", 8, (8, 128, 3, None, 3)), ("W13 EP8", 8, (8, 64, 4, None, 3))]:
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    counts = route(m, e, TOP_K, seed=0)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    rule = gluon_tiles(m * TOP_K, e, n, k)
    out = [f"{label} M={m} rule {rule}: {graph_us([lambda q=q: sk.w4a16_grouped_gluon(x, q, counts, *rule) for q in qws], calls=STEP_CALLS):.1f}"]
    for fix in (0, 1, 2):
        sk.FIXUP = fix
        out.append(f"fix{fix} {graph_us([lambda q=q: sk.w4a16_grouped_gluon(x, q, counts, *tiles, stream_k=True) for q in qws], calls=STEP_CALLS):.1f}")
    sk.FIXUP = 2
    bn = tiles[1]
    ntiles = -(-n // bn) * sum(-(-int(c) // tiles[0]) for c in counts.tolist())
    real = sk.sm_count
    for per in (1, 2):  # grids of whole tiles: ntiles / per programs (when it divides)
        if ntiles % per == 0:
            sk.sm_count = lambda d, g=ntiles // per: g
            out.append(f"whole{per} grid {ntiles // per} {graph_us([lambda q=q: sk.w4a16_grouped_gluon(x, q, counts, *tiles[:4], ctas_per_sm=1, stream_k=True) for q in qws], calls=STEP_CALLS):.1f}")
            out.append(f"persist{per} {graph_us([lambda q=q: sk.w4a16_grouped_gluon(x, q, counts, *tiles[:4], ctas_per_sm=1) for q in qws], calls=STEP_CALLS):.1f}")
    sk.sm_count = real
    print(" | ".join(out), flush=True)
