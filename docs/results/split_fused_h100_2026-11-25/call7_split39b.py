"""Session 39 (calls 7-8: the fused fc1, H100; call 7 had 24-48 rows): K split across programs for the few-tile grouped calls of decode (W13 and W2 at
EP8 in the decode batch, M=1 at E128/TP2/EP8 DP), GEMM and fused fc1 + SwiGLU: the rule's tiles
with split_k 1/2/4/8 and other groups a stage; CUDA graphs of 10 calls, weights rotated past L2,
4 routings; every config checked against the unsplit call, and a split call repeats its bits."""
import itertools, statistics, sys, time
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels import w4a16_gluon as wg
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_swiglu_tiles, gluon_launch, gluon_groups
from qarl_kernels.w4a16_quantize import w4a16_quantize

torch.manual_seed(0)
scheme = get_scheme("w4a16")
peak = ceilings()
print("copy GB/s", round(peak["copy_GBps"]), flush=True)
T0 = time.time()
SEEDS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
FULL = len(sys.argv) > 2

def nbytes(touched, n, k, rows):
    return touched * (n * k // 2 + n * (k // 128) * 2) + rows * k * 2 + rows * n * 2

CASES = [  # label, e, routed, n, k, tokens (session 39, call 7: the fused fc1 from 17 rows)
    ("W13 EP8 batch", 16, 128, 1536, 2048, (24, )),
    ("W13 EP8 DP", 16, None, 1536, 2048, (3, 4)),
    ("W13 E128", 128, None, 1536, 2048, (2, 3, 4)),
    ("W13 TP2", 128, None, 768, 2048, (3, 4, 6)),
]
for label, e, routed, n, k, tokens in CASES:
    master = torch.randn(e, n, k, device="cuda")
    qws = [w4a16_quantize(master + i, scheme) for i in range(copies_for(e * n * k // 2))]
    for q in qws:
        wg.lane_codes(q)
    for m in tokens:
        for swiglu in (True, ):
            res = {}
            for seed in range(SEEDS):
                counts = route(m, routed or e, 8, seed=seed, local=e if routed else None)
                rows, touched = int(counts.sum()), int((counts > 0).sum())
                if rows == 0:
                    continue
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                probs = torch.rand(rows, device="cuda") if swiglu else None
                shape = (rows, e, n, k)
                base = gluon_swiglu_tiles(*shape) if swiglu else gluon_tiles(*shape)
                launch = gluon_launch(shape, base, swiglu=swiglu)
                g0 = launch.pop("groups")
                groups = (1, 2, 4) if k % 512 == 0 else (1, 2)
                cands = []
                for g in groups:
                    for s in (1, 2, 3, 4, 6, 8):
                        if (k // 128) % (g * s) or (s > 1 and base[4]):
                            continue
                        if not FULL and g != g0 and s not in (1, 2, 4):
                            continue
                        for st in (sorted({base[2], 2, 3}) if FULL else (base[2], )):
                            cands.append((g, s, st))
                want = wg.w4a16_grouped_gluon(x, qws[0], counts, *base, groups=g0, probs=probs, **launch)
                for g, s, st in cands:
                    kw = dict(launch, groups=g, split_k=s, refill_first=launch['refill_first'] and g > 1)
                    if s > 1:
                        kw.update(early_words=False, tail=0)
                    tiles = (base[0], base[1], st) + tuple(base[3:])
                    try:
                        got = [wg.w4a16_grouped_gluon(x, qws[0], counts, *tiles, probs=probs, **kw) for _ in range(2)]
                    except Exception as err:
                        print("FAIL", label, m, swiglu, g, s, st, str(err)[:200], flush=True)
                        continue
                    err = ((got[0].float() - want.float()).abs().max() / want.float().abs().max()).item()
                    if err > 1e-2 or not torch.equal(got[0], got[1]):
                        print("BAD", label, m, swiglu, g, s, st, err, torch.equal(got[0], got[1]), flush=True)
                    us = graph_us([lambda q=q: wg.w4a16_grouped_gluon(x, q, counts, *tiles, probs=probs, **kw) for q in qws],
                                  calls=STEP_CALLS, replays=100)
                    res.setdefault((g, s, st), []).append((us, 100 * nbytes(touched, n, k, rows) / us / 1e3 / peak["copy_GBps"]))
            key0 = (g0, 1, base[2])
            print(f"   [{time.time() - T0:.0f} s]", flush=True)
            t0 = statistics.median(u for u, _ in res[key0])
            print(f"== {label} M={m} swiglu={int(swiglu)} rule tiles {base} groups {g0}: {t0:.2f} us, "
                  f"{statistics.median(b for _, b in res[key0]):.1f}%BW", flush=True)
            for key, v in sorted(res.items(), key=lambda kv: statistics.median(u for u, _ in kv[1])):
                us = [u for u, _ in v]
                print(f"   g{key[0]} split{key[1]} st{key[2]}: {statistics.median(us):6.2f} us "
                      f"({min(us):.2f}-{max(us):.2f}) {statistics.median(b for _, b in v):5.1f}%BW  x{t0 / statistics.median(us):.2f}", flush=True)
    del qws, master
