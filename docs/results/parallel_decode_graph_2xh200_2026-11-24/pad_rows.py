"""Session 27: what the fixed-size exchange's padding costs the W4A16 expert kernels. One EP
rank's 16 (EP8) or 64 (EP2) experts, the gathered tokens of all ranks routed top-8 over 128
experts (uniform); the kernels get x with exactly the routed rows, or padded to capacity
(gathered tokens x 8) with the same counts. CUDA graphs of 10 calls, rotated weights."""
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import _w4a16_weights
from qarl_kernels.bench_setup import STEP_CALLS, graph_us, route
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul, w4a16_grouped_swiglu

scheme = get_scheme("w4a16")
print(torch.cuda.get_device_name(), torch.__version__)
print("layout, weight, tokens/rank, gathered, routed rows, capacity, exact us, padded us, ratio")
for ep, local in ((8, 16), (2, 64)):
    for label, n, k, swiglu in (("W13", 1536, 2048, True), ("W2", 2048, 768, False)):
        qws, _ = _w4a16_weights(scheme, local, n, k)
        for per_rank in (8, 32, 128):
            gathered = per_rank * ep
            counts = route(gathered, 128, 8, seed=1, local=local)
            routed, capacity = int(counts.sum()), gathered * min(8, local)
            x = torch.randn(capacity, k, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(capacity, device="cuda")
            times = []
            for rows in (routed, capacity):
                xs, ps = x[:rows], probs[:rows]
                if swiglu:
                    fns = [lambda q=q: w4a16_grouped_swiglu(xs, q, counts, ps) for q in qws]
                else:
                    fns = [lambda q=q: w4a16_grouped_matmul(xs, q, counts) for q in qws]
                times.append(graph_us(fns, calls=STEP_CALLS))
            y_exact = (w4a16_grouped_swiglu(x[:routed], qws[0], counts, probs[:routed]) if swiglu
                       else w4a16_grouped_matmul(x[:routed], qws[0], counts))
            y_pad = (w4a16_grouped_swiglu(x, qws[0], counts, probs) if swiglu
                     else w4a16_grouped_matmul(x, qws[0], counts))
            same = torch.equal(y_exact, y_pad[:routed])
            print(f"EP{ep}, {label}, {per_rank}, {gathered}, {routed}, {capacity}, "
                  f"{times[0]:.1f}, {times[1]:.1f}, {times[1] / times[0]:.2f}, "
                  f"routed rows equal: {same}", flush=True)
