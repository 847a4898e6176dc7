"""W13 EP8 with (128, 128, 2) tiles (2 CTAs per SM: 254 registers, 85 KB shared): row tiles
T = sum ceil(count / 128), grid 12 T against 264 slots, and the time, for several routings."""
import torch

from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

scheme = get_scheme("w4a16")
e, n, k = 16, 1536, 2048
master = torch.randn(e, n, k, device="cuda")
q0 = w4a16_quantize(master, scheme)
qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
    1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
for m, skew, seed in [(256, 0.0, 0), (256, 0.5, 0), (256, 0.0, 1), (256, 0.5, 1), (256, 0.0, 2),
                      (256, 0.5, 2), (240, 0.5, 1), (224, 0.5, 0), (240, 0.0, 0), (192, 0.5, 0)]:
    counts = route(m, e, TOP_K, seed=seed, skew=skew)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    tiles = int(((counts + 127) // 128).sum())
    over = int((counts > 128).sum())
    ts = {t: graph_us([lambda q=q, t=t: w4a16_grouped_gluon(x, q, counts, *t) for q in qws],
                      calls=STEP_CALLS)
          for t in [(128, 128, 2, None, None), (64, 128, 3, None, None), (64, 64, 2, None, None)]}
    print(f"M={m} skew {skew} seed {seed}: max {int(counts.max())}, experts over 128: {over}, "
          f"row tiles {tiles}, CTAs {12 * tiles} (264 slots) | "
          + "; ".join(f"{t[:3]} {u:.1f} us" for t, u in ts.items()), flush=True)
