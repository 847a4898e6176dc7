"""A decode MoE layer's two expert calls as an engine's graph runs them: fused fc1 + SwiGLU then
W2, 5 layers a graph (10 calls), rotated weight copies; the ops as registered, with
gluon_release as the rule says and with it off. 3 uniform and 2 skewed routings."""
import statistics, torch
import qarl_kernels.w4a16_gemm as wgemm
from qarl_kernels.bench import TOP_K
from qarl_kernels.bench_setup import graph_us, route, copies_for
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
rule = wgemm.gluon_release
e = 16
w13 = torch.randn(e, 1536, 2048, device="cuda")
w2 = torch.randn(e, 2048, 768, device="cuda")
n = copies_for(e * (1536 * 2048 + 2048 * 768) // 2)
pairs = [(w4a16_quantize(w13 + i, scheme), w4a16_quantize(w2 + i, scheme)) for i in range(n)]
for label, m, routed in [("EP8", 8, None), ("EP8", 64, None), ("EP8, TP attention", 64, 128),
                         ("EP8, TP attention", 128, 128), ("EP8, TP attention", 256, 128)]:
    out = {}
    for on in (True, False):
        wgemm.gluon_release = rule if on else (lambda *a, **k: False)
        ts = []
        for name, skew, seed in [("u0", 0, 0), ("u1", 0, 1), ("u2", 0, 2), ("s0", .5, 0), ("s1", .5, 1)]:
            counts = route(m, routed or e, TOP_K, seed=seed, skew=skew, local=e if routed else None)
            rows = int(counts.sum())
            x = torch.randn(rows, 2048, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(rows, device="cuda")
            def layer(p):
                h = wgemm.w4a16_grouped_swiglu(x, p[0], counts, probs)
                return wgemm.w4a16_grouped_matmul(h, p[1], counts)
            for p in pairs:
                layer(p)  # lane codes made outside capture
            ts.append((name, graph_us([lambda p=p: layer(p) for p in pairs], calls=5)))
        out[on] = ts
    wgemm.gluon_release = rule
    u = {on: statistics.median(t for nm, t in out[on] if nm[0] == "u") for on in out}
    s = {on: statistics.median(t for nm, t in out[on] if nm[0] == "s") for on in out}
    print(f"{label} M={m}: fc1 + W2 per layer, release as the rule {u[True]:.1f} us uniform, "
          f"{s[True]:.1f} skewed; release off {u[False]:.1f} / {s[False]:.1f} | "
          + " ".join(f"{nm} {a:.1f}/{b:.1f}" for (nm, a), (_, b) in zip(out[True], out[False])),
          flush=True)
