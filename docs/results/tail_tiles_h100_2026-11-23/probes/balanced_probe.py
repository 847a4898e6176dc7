"""What token-tile padding costs at EP8 M=64..256: the rule's tiles under the bench's uniform
routings against the same and other tiles with every expert holding exactly the mean
(rows / 16): the upper bound of a tile that fits each expert's rows without a padded row
tile. Graphs of 10 calls; bits checked against the rule's tiles."""
import statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, _expert_bytes, _pct_copy
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_x_async
from qarl_kernels.w4a16_gluon import w4a16_grouped_gluon
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
print(f"copy {peak['copy_GBps']:.0f} GB/s", flush=True)
scheme = get_scheme("w4a16")
GRID = {
    ("W13 EP8", 64): [(64, 64, 3, None, None), (32, 64, 3, None, None), (32, 64, 4, None, None)],
    ("W13 EP8", 128): [(64, 64, 2, None, None), (64, 64, 3, None, None), (128, 64, 2, None, None),
                       (128, 128, 2, None, None)],
    ("W13 EP8", 256): [(128, 128, 2, None, None), (128, 64, 2, None, None),
                       (64, 128, 3, None, None), (64, 64, 2, None, None)],
    ("W2 EP8", 64): [(64, 128, 3, None, None), (32, 128, 3, None, None), (64, 64, 3, None, None)],
    ("W2 EP8", 128): [(64, 128, 2, None, None), (64, 64, 2, None, None), (64, 64, 3, None, None),
                      (128, 128, 2, None, None)],
    ("W2 EP8", 256): [(128, 128, 2, None, None), (128, 64, 2, None, None),
                      (64, 128, 2, None, None)],
}
for (label, m), cands in GRID.items():
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    rows = m * TOP_K
    rule = gluon_tiles(rows, e, n, k)
    xa = gluon_x_async(rows, e, n, k)
    routings = [("uniform", route(m, e, TOP_K, seed=s)) for s in range(4)]
    routings.append(("balanced", torch.full((e,), rows // e, dtype=torch.int32, device="cuda")))
    print(f"== {label} M={m} rule {rule}", flush=True)
    for name, counts in routings:
        x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
        ref = scheme.reference_grouped_matmul(x, q0, counts.cpu())
        line = []
        for c in ([rule] + [c for c in cands if c != rule]):
            y = w4a16_grouped_gluon(x, q0, counts, *c, x_async=xa)
            err = (y.float() - ref.float()).abs().max().item()
            t = graph_us([lambda q=q, c=c: w4a16_grouped_gluon(x, q, counts, *c, x_async=xa)
                          for q in qws], calls=STEP_CALLS)
            bw = _pct_copy(_expert_bytes(e, n, k, 128, rows, True), t, peak)
            line.append(f"{c[:3]} {t:.1f}us {bw:.0f}% {2 * rows * n * k / t / 1e6:.0f}TF"
                        + ("" if err < 0.5 else f" ERR {err}"))
        print(f"  {name:9s} busiest {int(counts.max())}: " + " | ".join(line), flush=True)
    del qws
