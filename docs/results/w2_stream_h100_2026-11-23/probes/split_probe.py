"""Where the rule kernel's time goes: the rule against builds without the MMAs (w4g_nomma: the
unpack kept alive as the wgmma waits' deps), without the unpack (w4g_nounpack: the words go
to the wgmma as they are) and without either (w4g_neither), with weights rotated over copies
> 2x L2 and with one copy in L2; and with both, the wgmma reading a fixed operand
(w4g_decoupled), and with the unpack kept beside it (w4g_independent, against the rule with
the same fold, w4g_folded): whether the unpack and the MMAs overlap when neither waits on the
other."""
import os, statistics, sys, torch
sys.path.insert(0, os.path.dirname(__file__))
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_launch
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon as rule_fn
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
import w4g_decoupled, w4g_folded, w4g_independent, w4g_neither, w4g_nomma, w4g_nounpack
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
KERNELS = {k: v for k, v in {"rule": rule_fn, "no MMA": w4g_nomma.w4a16_grouped_gluon,
           "no unpack": w4g_nounpack.w4a16_grouped_gluon,
           "neither": w4g_neither.w4a16_grouped_gluon,
           "decoupled": w4g_decoupled.w4a16_grouped_gluon,
           "independent": w4g_independent.w4a16_grouped_gluon,
           "folded": w4g_folded.w4a16_grouped_gluon}.items()
           if k in os.environ.get("BUILDS", "rule,no MMA,no unpack,neither,decoupled").split(",")}
TILES = eval(os.environ.get("TILES", "None"))  # [(tiles5, launch overrides)]: instead of the rule's
for label, m in eval(os.environ.get("CELLS", """(("W2 EP8, TP attention", 64), ("W2 EP8, TP attention", 128),
        ("W2 EP8, TP attention", 256), ("W2 EP8", 64), ("W13 EP8", 64), ("W13 EP8", 128),
        ("W13 EP8, TP attention", 64))""")):
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    routed = ROUTED_EXPERTS.get(label)
    out = {}
    for s in range(3):
        counts = route(m, routed or e, TOP_K, seed=s, local=e if routed else None)
        rows = int(counts.sum())
        shape = (rows, e, n, k)
        rule = gluon_tiles(*shape)
        launch = gluon_launch(shape, rule)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        for tiles, over in TILES or [(rule, {})]:
            for name, fn in KERNELS.items():
                f = lambda q, fn=fn, tiles=tiles, over=over: fn(x, q, counts, *tiles, **dict(launch, **over))
                out.setdefault(f"{name} {tiles} {over}", []).append((
                    graph_us([lambda q=q: f(q) for q in qws], calls=STEP_CALLS),
                    graph_us([lambda: f(q0)], calls=STEP_CALLS)))
    print(f"== {label} M={m} rule {rule} {launch}", flush=True)
    for name, v in out.items():
        print(f"  {name:48s} rotated {statistics.median(a for a, _ in v):6.2f} us  one copy in L2 {statistics.median(b for _, b in v):6.2f} us", flush=True)
    del qws
