"""The warp-specialized unpack probe (_w4g_ws) against the rule's kernel: seed 0, uniform and
skewed routing, graphs of 10 calls, us; and its output against the rule's (max abs diff over
max abs)."""
import os
import sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qarl_kernels.bench import DECODE_SHAPES, GROUPED_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import w4a16_unpack_ws as ws

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
VARIANTS = [(64, 64, 3, 120, 80), (64, 64, 4, 128, None), (64, 64, 6, 128, None),
            (64, 128, 3, 128, None), (128, 64, 3, 128, None), (32, 64, 3, 120, 80)]
CASES = [("W13 EP8", m) for m in (64, 128, 256)] + [("W2 EP8", m) for m in (64, 128, 256)] + [
    ("W13 E128", 256), ("W13 E128", 1024), ("W2 E128", 1024), ("W13 TP2", 256)]
if os.environ.get("SET"):
    CASES = [c for c in CASES if f"{c[0]} {c[1]}" in os.environ["SET"].split(",")]
scheme = get_scheme("w4a16")
weights = {}
for label, m in CASES:
    e, n, k = SHAPES[label]
    if label not in weights:
        weights.clear()
        master = torch.randn(e, n, k, device="cuda")
        q0 = w4a16_quantize(master, scheme)
        weights[label] = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
            1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    qws = weights[label]
    rule = gluon_tiles(m * TOP_K, e, n, k) or (64, 128, 3, None, None)
    out = []
    for skew in (0.0, 0.5):
        counts = route(m, e, TOP_K, seed=0, skew=skew)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        want = w4a16_grouped_gluon(x, qws[0], counts, *rule).float()
        t_rule = graph_us([lambda q=q: w4a16_grouped_gluon(x, q, counts, *rule) for q in qws],
                          calls=STEP_CALLS)
        line = f"skew {skew}: rule {rule} {t_rule:.1f}"
        for v in VARIANTS:
            try:
                got = ws.w4a16_grouped_ws(x, qws[0], counts, *v).float()
                torch.cuda.synchronize()
            except Exception as err:
                line += f" | {v} FAILED {str(err).splitlines()[0][:80]}"
                continue
            diff = ((got - want).abs().max() / want.abs().max()).item()
            t = graph_us([lambda q=q, v=v: ws.w4a16_grouped_ws(x, q, counts, *v) for q in qws],
                         calls=STEP_CALLS)
            line += f" | {v} {t:.1f} ({t_rule / t:.2f}x, diff {diff:.0e})"
        out.append(line)
    print(f"{label} M={m}\n  " + "\n  ".join(out), flush=True)
