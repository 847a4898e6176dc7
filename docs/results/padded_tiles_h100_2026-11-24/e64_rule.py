"""Session 28: the fused W13 + SwiGLU at EP2's 64 experts, the tiles of this tree's rules
against those of 6afdd4e (qarl_kernels_old), CUDA graphs of 10 calls, rotated weights,
medians over 3 routings, uniform and skewed (0.5)."""
import statistics

import torch

import qarl_kernels.w4a16_gemm as new
import qarl_kernels_old.w4a16_gemm as old
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights
from qarl_kernels.bench_setup import STEP_CALLS, graph_us, route

print(torch.cuda.get_device_name(), torch.__version__, flush=True)
qws, _ = _w4a16_weights(get_scheme("w4a16"), 64, 1536, 2048)
for skew in (0.0, 0.5):
    for m in (16, 24, 32, 48, 64, 96):
        t = {"old": [], "new": []}
        for seed in range(3):
            counts = route(m, 64, 8, seed=seed, skew=skew)
            x = torch.randn(int(counts.sum()), 2048, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(x.shape[0], device="cuda")
            ys = {}
            for name, mod in (("old", old), ("new", new)):
                t[name].append(graph_us([lambda q=q: mod.w4a16_grouped_swiglu(x, q, counts, probs)
                                         for q in qws], calls=STEP_CALLS))
                ys[name] = mod.w4a16_grouped_swiglu(x, qws[0], counts, probs).float()
            rel = ((ys["new"] - ys["old"]).norm() / ys["old"].norm()).item()
        o, n = statistics.median(t["old"]), statistics.median(t["new"])
        tiles = new.gluon_swiglu_tiles(m * 8, 64, 1536, 2048)
        print(f"E64 W13 fused skew {skew} M={m}: old {o:.1f} new {n:.1f} us ({o / n:.2f}x) "
              f"new tiles {tiles}; new vs old rel diff {rel:.1e}", flush=True)
