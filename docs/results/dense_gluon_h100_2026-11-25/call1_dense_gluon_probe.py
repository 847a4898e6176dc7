"""Probe: dense W4A16 at 32-256 tokens through the Gluon grouped kernel, K split into S
'experts' (x slices stacked, weight column slices as experts), the S partial outputs summed
after. Times the Gluon call alone (what an in-kernel split-K would roughly cost) and with the
bf16 sum, against bf16 and the current w4a16_linear."""
import itertools
import sys
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.w4a16_gemm import w4a16_linear
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_lanes import lane_codes
from qarl_kernels.w4a16_quantize import w4a16_quantize

T0 = time.time()
LIMIT = float(sys.argv[1]) if len(sys.argv) > 1 else 500
SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
          ("o_proj TP2", 2048, 2048)]
MS = [int(v) for v in (sys.argv[2].split(",") if len(sys.argv) > 2 else ["32", "64", "128", "256"])]
scheme = get_scheme("w4a16-g128")


def t(fns):
    return graph_us(fns, replays=100, calls=STEP_CALLS)


def tiles_for(m):
    bms = [b for b in (16, 32, 64, 128) if b <= max(m, 16) and b * 8 >= m]
    out = []
    for bm, bn, st, g in itertools.product(bms, (64, 128), (2, 3, 4), (1, 2)):
        if st == 4 and bm > 32:
            continue
        if bm == 128 and (bn == 128 and st > 2):
            continue
        out.append((bm, bn, st, g))
    return out


for label, n, k in SHAPES:
    master = torch.randn(n, k, device="cuda")
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    q1 = [w4a16_quantize(master + i, scheme) for i in range(copies_for(n * k // 2))]
    for m in MS:
        if time.time() - T0 > LIMIT:
            print("TIME LIMIT", flush=True)
            sys.exit(0)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        want = scheme.reference_matmul(x, q1[0]).float()
        tb = t([lambda w=w: x @ w.t() for w in wb])
        tcur = t([lambda q=q: w4a16_linear(x, q) for q in q1])
        print(f"== {label} {n}x{k} M={m}: bf16 {tb:.1f} us, current {tcur:.1f} us "
              f"({tb / tcur:.2f}x)", flush=True)
        for s in (1, 2, 4, 8):
            ks = k // s
            if ks < 256:
                continue
            ms_ = master.view(n, s, ks).permute(1, 0, 2).contiguous()
            qs = [w4a16_quantize(ms_ + i, scheme) for i in range(len(q1))]
            for q in qs:
                lane_codes(q)
            xs = x.view(m, s, ks).permute(1, 0, 2).reshape(s * m, ks).contiguous()
            counts = torch.full((s,), m, dtype=torch.int32, device="cuda")
            res = []
            for bm, bn, st, g in tiles_for(m):
                if ks % (128 * g):
                    continue
                def run(q, bm=bm, bn=bn, st=st, g=g):
                    return w4a16_grouped_gluon(xs, q, counts, bm, bn, st, groups=g, pdl=True)
                try:
                    y = run(qs[0]).float().view(s, m, n).sum(0)
                except Exception as err:
                    print("  skip", (bm, bn, st, g), str(err).splitlines()[0][:80], flush=True)
                    continue
                err = ((y - want).norm() / want.norm()).item()
                if not err < 1e-2:
                    print("  WRONG", (bm, bn, st, g), err, flush=True)
                    continue
                res.append((t([lambda q=q: run(q) for q in qs]), (bm, bn, st, g)))
            res.sort()
            if not res:
                continue
            best = res[0][1]
            def summed(q, bm=best[0], bn=best[1], st=best[2], g=best[3]):
                y = w4a16_grouped_gluon(xs, q, counts, bm, bn, st, groups=g, pdl=True)
                return y.view(s, m, n).sum(0) if s > 1 else y
            tsum = t([lambda q=q: summed(q) for q in qs])
            print(f"  S={s}: " + "; ".join(f"{tt:.1f} m{c[0]} n{c[1]} st{c[2]} g{c[3]}"
                                           for tt, c in res[:4])
                  + f" | with sum {tsum:.1f} ({tb / tsum:.2f}x bf16) | gluon alone "
                  f"{tb / res[0][0]:.2f}x", flush=True)
            del qs
    del wb, q1
print(f"done in {time.time() - T0:.0f} s")
