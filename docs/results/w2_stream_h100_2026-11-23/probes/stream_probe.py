"""W4A16 stream kernel (x resident, words streaming, calls overlapped) against the rule's tile
kernel: bits against the tile kernel with the same tiles, a PDL chain in a graph, and graph
times over 3 uniform and 4 skewed routings."""
import os, statistics, sys, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_launch
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
sys.path.insert(0, os.path.dirname(__file__))
from stream_modes import w4a16_grouped_stream
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
torch.manual_seed(0)

# chain: y1 = f(x), y2 = f(y1) with a square weight, in a graph with PDL; against eager
e, k = 16, 768
wsq = w4a16_quantize(torch.randn(e, k, k, device="cuda"), scheme)
bad = 0
for counts in ([4] * 16, [0, 9, 3, 0, 17, 2, 1, 4, 0, 5, 5, 5, 1, 2, 0, 6], [16] * 16, [0] * 15 + [3]):
    tok = torch.tensor(counts, device="cuda", dtype=torch.int32)
    src = torch.randn(sum(counts), k, device="cuda").bfloat16()
    x = src.clone()
    for cand in ((16, 128, 3, 2, 1, 8), (32, 128, 3, 2, 1, 4), (16, 64, 3, 2, 2, 4), (16, 128, 6, 1, 1, 8)):
        bm, bn, st, g = cand[:4]
        want1 = w4a16_grouped_gluon(src, wsq, tok, bm, bn, 3, groups=g)
        want2 = w4a16_grouped_gluon(want1, wsq, tok, bm, bn, 3, groups=g)
        ok1 = torch.equal(w4a16_grouped_stream(src, wsq, tok, *cand), want1)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = []
            h = x
            for i in range(6):
                h = w4a16_grouped_stream(h if i % 2 else x, wsq, tok, *cand)
                outs.append(h)
        fails = 0
        for rep in range(20):
            x.copy_(src if rep % 2 == 0 else src * 0.5)
            graph.replay()
            torch.cuda.synchronize()
            w1 = want1 if rep % 2 == 0 else w4a16_grouped_gluon(x, wsq, tok, bm, bn, 3, groups=g)
            w2 = w4a16_grouped_gluon(w1, wsq, tok, bm, bn, 3, groups=g)
            fails += not all(torch.equal(o, w1 if i % 2 == 0 else w2) for i, o in enumerate(outs))
        bad += (not ok1) + fails
        print("chain", counts[:6], cand, "eager same:", ok1, "graph fails:", fails, "/20", flush=True)
print("chain bad:", bad, flush=True)
if bad and not os.environ.get("GO_ON"):
    sys.exit(1)

CASES = eval(os.environ["CASES"])
SKEWED = 4
for label, m, cands in CASES:
    e, n, k = SHAPES[label]
    routed = ROUTED_EXPERTS.get(label)
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    kw0 = dict(routed=routed or e, local=e if routed else None)
    routings = [(f"u{s}", route(m, kw0["routed"], TOP_K, seed=s, local=kw0["local"])) for s in range(3)]
    routings += [(f"s{s}", route(m, kw0["routed"], TOP_K, seed=s, skew=0.5, local=kw0["local"]))
                 for s in range(SKEWED)]
    res = {"rule": {}}
    res.update({c: {} for c in cands})
    for name, counts in routings:
        rows = int(counts.sum())
        shape = (rows, e, n, k)
        rule = gluon_tiles(*shape)
        launch = gluon_launch(shape, rule)
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        res["rule"][name] = (graph_us([lambda q=q: w4a16_grouped_gluon(x, q, counts, *rule, **launch)
                                       for q in qws], calls=STEP_CALLS), "")
        for c in cands:
            bm, bn, st, g = c[:4]
            mode = c[6] if len(c) > 6 else 0
            base = w4a16_grouped_gluon(x, q0, counts, bm, bn, 3, groups=g)
            try:
                y = w4a16_grouped_stream(x, q0, counts, *c)
            except Exception as err:
                print(label, m, c, "failed:", str(err).splitlines()[0][:200], flush=True)
                res[c][name] = (float("nan"), "X")
                continue
            same = torch.equal(y, base) or mode != 0
            bad += not same
            res[c][name] = (graph_us([lambda q=q: w4a16_grouped_stream(x, q, counts, *c) for q in qws],
                                     calls=STEP_CALLS), "" if same else "!")
    print(f"== {label} M={m} counts u0 {routings[0][1].tolist()} s0 max {int(routings[3][1].max())}", flush=True)
    u1 = statistics.median(res["rule"][f"u{s}"][0] for s in range(3))
    for c, d in res.items():
        u = statistics.median(d[f"u{s}"][0] for s in range(3))
        sk = statistics.median(d[f"s{s}"][0] for s in range(SKEWED))
        print(f"  {str(c):24s} uniform {u:6.2f} us ({u1 / u:4.2f}x) skewed {sk:6.2f} | "
              + " ".join(f"{nm} {t:.2f}{f}" for nm, (t, f) in d.items()), flush=True)
    del qws
print("bits differ in", bad, "cases")
