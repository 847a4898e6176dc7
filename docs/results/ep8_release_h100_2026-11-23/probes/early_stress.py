"""Early words: bits against the plain launch over many calls and routings (E128 skewed, EP8)."""
import torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_groups, gluon_pdl, gluon_release, gluon_x_async, gluon_tail
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
for label, m in [("W13 E128", 256), ("W13 EP8", 8), ("W13 EP8, TP attention", 128), ("W13 EP8, TP attention", 256), ("W13 EP8", 32)]:
    e, n, k = SHAPES[label]
    routed = ROUTED_EXPERTS.get(label)
    q = w4a16_quantize(torch.randn(e, n, k, device="cuda"), scheme)
    for seed in range(4):
        for skew in (0.0, 0.5):
            counts = route(m, routed or e, TOP_K, seed=seed, skew=skew, local=e if routed else None)
            rows = int(counts.sum()); shape = (rows, e, n, k)
            t = gluon_tiles(*shape)
            kw = dict(groups=gluon_groups(*shape), pdl=gluon_pdl(rows), x_async=gluon_x_async(*shape), tail=gluon_tail(*shape))
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            base = w4a16_grouped_gluon(x, q, counts, *t, **kw)
            bad = []
            for i in range(20):
                y = w4a16_grouped_gluon(x, q, counts, *t, early_words=True, release=bool(i % 2), **kw)
                if not torch.equal(y, base):
                    d = (y != base).any(1).nonzero().flatten()
                    bad.append((i, d.numel(), d[:4].tolist()))
            base2 = w4a16_grouped_gluon(x, q, counts, *t, **kw)
            print(label, m, seed, skew, t, "base stable", torch.equal(base, base2), "bad", bad[:3], len(bad), flush=True)
