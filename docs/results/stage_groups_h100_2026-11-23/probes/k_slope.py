"""Where W13 EP8 M=8's time over its stream floor goes (round 17's rules): the kernel (the rule's tiles) and
the stream-only floor at K = 2048, 4096 and 8192 (N=1536, 16 experts, uniform routing,
graphs of 10 calls). A line through them splits each into a fixed part (intercept) and a part
per 128-input block (slope)."""
import torch
from qarl_kernels.bench import TOP_K, _stream_floor_us
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul
from qarl_kernels.w4a16_quantize import w4a16_quantize
from megatron_qarl.quant import get_scheme

scheme = get_scheme("w4a16")
e, n = 16, 1536
for m in (8, 64):
    pts = []
    for k in (2048, 4096, 8192):
        q0 = w4a16_quantize(torch.randn(e, n, k, device="cuda"), scheme)
        qws = [q0] + [w4a16_quantize(torch.randn(e, n, k, device="cuda"), scheme)
                      for _ in range(1, copies_for(q0.data.numel() * 4 + q0.scale.numel() * 2))]
        counts = route(m, e, TOP_K, seed=0)
        x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
        w4a16_grouped_matmul(x, q0, counts)  # the lane-order codes, made once per weight
        for q in qws:
            w4a16_grouped_matmul(x, q, counts)
        t = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws], calls=STEP_CALLS)
        f = _stream_floor_us(int((counts > 0).sum()), n, k)
        pts.append((k // 128, t, f))
        print(f"W13-like EP8 M={m} K={k}: kernel {t:.2f} us, stream floor {f:.2f} us, gap {t - f:.2f}", flush=True)
        del qws
    for col, name in ((1, "kernel"), (2, "floor")):
        xs = [p[0] for p in pts]; ys = [p[col] for p in pts]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sum((a - mx) ** 2 for a in xs)
        print(f"  M={m} {name}: {my - slope * mx:.2f} us fixed + {slope:.3f} us per 128-input block", flush=True)
