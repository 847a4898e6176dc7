"""The unpack-WS probe with parts switched off (WS_MODE: 0 all, 1 no unpack, 2 no MMA, 3
neither; wrong numbers except 0): W13 EP8 M=64 and 128, seed 0 uniform, graphs of 10 calls."""
import os
import sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qarl_kernels.bench import DECODE_SHAPES, TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import w4a16_unpack_ws as ws

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
scheme = get_scheme("w4a16")
for label in ("W13 EP8", ):
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    for m in (64, 128):
        counts = route(m, e, TOP_K, seed=0)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        line = f"mode {ws.MODE} {label} M={m}:"
        for v in [(64, 64, 6, 128, None), (64, 64, 3, 120, 80), (64, 64, 2, 128, None)]:
            t = graph_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts, *v) for q in qws],
                         calls=STEP_CALLS)
            line += f" | {v} {t:.1f}"
        print(line, flush=True)
