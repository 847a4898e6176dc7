"""Which EP8 decode cells could reach 70% of copy bandwidth by hiding memory better: the rule's
graph time with weights rotated over copies > 2x L2 (the bench's protocol) against one copy
that stays in L2, beside the time 70% needs (bench bytes: touched experts + x + y)."""
import statistics, torch
from qarl_kernels.bench import DECODE_SHAPES, TOP_K, ROUTED_EXPERTS, _expert_bytes
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route, ceilings
from qarl_kernels.w4a16_gemm import gluon_tiles, gluon_launch, w4a16_grouped_matmul
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme
scheme = get_scheme("w4a16")
SHAPES = {s[0]: s[1:] for s in DECODE_SHAPES}
peak = ceilings()
print(f"copy {peak['copy_GBps']:.0f} GB/s", flush=True)
print("| cell | M | rows | rotated us (%BW) | one copy in L2 us (%BW) | 70% needs us |")
print("|---|---|---|---|---|---|")
for label in ("W13 EP8", "W2 EP8", "W13 EP8, TP attention", "W2 EP8, TP attention"):
    e, n, k = SHAPES[label]
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(
        1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
    routed = ROUTED_EXPERTS.get(label)
    for m in (8, 64, 128, 256):
        rot, l2, need, rws = [], [], [], []
        for s in range(3):
            counts = route(m, routed or e, TOP_K, seed=s, local=e if routed else None)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            w4a16_grouped_matmul(x, q0, counts)  # lane codes, outside capture
            for q in qws:
                w4a16_grouped_matmul(x, q, counts)
            nbytes = _expert_bytes(int((counts > 0).sum()), n, k, 128, rows, True)
            rot.append(graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws], calls=STEP_CALLS))
            l2.append(graph_us([lambda: w4a16_grouped_matmul(x, q0, counts)], calls=STEP_CALLS))
            need.append(nbytes / (0.7 * peak["copy_GBps"] * 1e3))
            rws.append(rows)
        r, c, t = statistics.median(rot), statistics.median(l2), statistics.median(need)
        print(f"| {label} | {m} | {statistics.median(rws)} | {r:.2f} ({70 * t / r:.1f}%) | {c:.2f} ({70 * t / c:.1f}%) | {t:.2f} |", flush=True)
    del qws
