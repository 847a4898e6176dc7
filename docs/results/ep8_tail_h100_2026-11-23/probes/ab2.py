"""A/B of two builds of the Gluon kernel (a: qarl_kernels._ab_old, b: qarl_kernels.w4a16_gluon)
with the rules' tiles and launch options, 2 uniform and 2 skewed routings, each timed a, b, a, b
(graphs of 10 calls); bits compared."""
import os, statistics, torch, importlib
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels import w4a16_gemm as R
from qarl_kernels import w4a16_gluon as B
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
A = importlib.import_module("qarl_kernels._ab_old")
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
CASES = eval(os.environ["CASES"])  # [(label, M, swiglu)]
bad = 0
for label, m, sw in CASES:
    e, n, k = SHAPES[label]; routed = ROUTED_EXPERTS.get(label)
    master = torch.randn(e, n, k, device="cuda"); q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    res = {"a": [], "b": []}
    for name, skew, seed in [("u0", 0, 0), ("u1", 0, 1), ("s0", .5, 0), ("s1", .5, 1)]:
        counts = route(m, routed or e, TOP_K, seed=seed, skew=skew, local=e if routed else None)
        rows = int(counts.sum()); shape = (rows, e, n, k)
        t = R.gluon_swiglu_tiles(*shape) if sw else R.gluon_tiles(*shape)
        kw = R.gluon_launch(shape, t, sw)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        same = torch.equal(A.w4a16_grouped_gluon(x, q0, counts, *t, **kw), B.w4a16_grouped_gluon(x, q0, counts, *t, **kw))
        bad += not same
        ts = {"a": [], "b": []}
        for v in "abab":
            f = (A if v == "a" else B).w4a16_grouped_gluon
            ts[v].append(graph_us([lambda q=q: f(x, q, counts, *t, **kw) for q in qws], calls=STEP_CALLS))
        for v in "ab":
            res[v].append(min(ts[v]))
    a, b = statistics.median(res["a"]), statistics.median(res["b"])
    print(f"{label}{' fused' if sw else ''} M={m} tiles {t} g{kw['groups']}: a {a:.1f} b {b:.1f} us ({a / b:.3f}x) | a "
          + " ".join(f"{x:.1f}" for x in res["a"]) + " | b " + " ".join(f"{x:.1f}" for x in res["b"]), flush=True)
    del qws
print("bits differ in", bad, "cases")
