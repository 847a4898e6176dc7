import statistics, torch, importlib, inspect
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels import w4a16_gemm as R
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
mods = {v: importlib.import_module(f"qarl_kernels._ab_{v}") for v in "abc"}
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
for label, m, sw in [("W13 E128", 128, False), ("W13 E128", 256, False), ("W2 E128", 256, False), ("W2 E128", 128, False),
                     ("W13 TP2", 256, False), ("W13 EP8", 8, False), ("W13 EP8, TP attention", 128, False), ("W13 E128", 128, True)]:
    e, n, k = SHAPES[label]; routed = ROUTED_EXPERTS.get(label)
    master = torch.randn(e, n, k, device="cuda"); q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    res = {v: [] for v in "abcab"}
    for name, skew, seed in [("u0", 0, 0), ("u1", 0, 1), ("s0", .5, 0), ("s1", .5, 1)]:
        counts = route(m, routed or e, TOP_K, seed=seed, skew=skew, local=e if routed else None)
        rows = int(counts.sum()); shape = (rows, e, n, k)
        t = R.gluon_swiglu_tiles(*shape) if sw else R.gluon_tiles(*shape)
        kw = dict(groups=R.gluon_groups(*shape, swiglu=sw), pdl=R.gluon_pdl(rows), x_async=R.gluon_x_async(*shape, swiglu=sw),
                  tail=R.gluon_tail(*shape, swiglu=sw), release=R.gluon_release(rows, e, t[4]), swiglu=sw)
        early = R.gluon_early_words(rows, e, k, t)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        for v in "abc":
            f = mods[v].w4a16_grouped_gluon
            kv = dict(kw, early_words=early) if "early_words" in inspect.signature(f).parameters else kw
            res[v].append(graph_us([lambda q=q: f(x, q, counts, *t, **kv) for q in qws], calls=STEP_CALLS))
        for v in "ab":  # again, for order effects
            f = mods[v].w4a16_grouped_gluon
            kv = dict(kw, early_words=early) if "early_words" in inspect.signature(f).parameters else kw
            res[v].append(graph_us([lambda q=q: f(x, q, counts, *t, **kv) for q in qws], calls=STEP_CALLS))
    print(f"{label}{' fused' if sw else ''} M={m} tiles {t}: " + "  ".join(f"{v}: " + " ".join(f"{x:.1f}" for x in res[v]) for v in "abc"), flush=True)
    del qws
