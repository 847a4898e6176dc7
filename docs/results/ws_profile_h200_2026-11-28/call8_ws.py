"""Session 41, call 8: the WS kernel at the sizes do_bench cannot time (under ~150 us: host
launches), in CUDA graphs of 10 calls (bench_setup.graph_us, weights rotated past L2), against
the op's path there (the Gluon decode kernel under 160-256 rows per expert) and bf16: EP8
under DP attention at M=128 and 256 (64 and 128 rows per expert, the decode cells that miss
2.5x) and at 160-192 rows per expert, where call 5's do_bench figures were launch-bound."""
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import STEP_CALLS, _batch, _w4a16_weights
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear

CASES = [("W13 EP8", 16, 1536, 2048, [128, 256, 320, 384, 512]),
         ("W2 EP8", 16, 2048, 768, [128, 256, 320, 384, 512])]

if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    scheme = get_scheme("w4a16")
    for label, e, n, k, tokens in CASES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        for m in tokens:
            counts, rows, touched, x, offs = _batch(m, e, k)
            ref = torch._grouped_mm(x, bf16_t[0], offs=offs).float()
            err = ((ws.w4a16_grouped_ws(x, qws[0], counts).float() - ref).abs()
                   - 2**-7 * ref.abs()).max().item()
            g_bf = graph_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t],
                            calls=STEP_CALLS)
            g_op = graph_us([lambda q=q: w4a16_grouped_linear(x, q, counts) for q in qws],
                            calls=STEP_CALLS)
            g_ws = graph_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts) for q in qws],
                            calls=STEP_CALLS)
            print(f"{label} M={m} ({rows / e:.0f} rows/expert), graphs: bf16 {g_bf:.1f} us, op "
                  f"{g_op:.1f} ({g_bf / g_op:.2f}x bf16's speed), WS {g_ws:.1f} "
                  f"({g_bf / g_ws:.2f}x; {g_op / g_ws:.2f}x the op's), "
                  f"{2 * rows * n * k / g_ws / 1e6:.0f} TFLOP/s, err {err:.3g} "
                  f"({'OK' if err <= 1e-2 else 'BAD'})", flush=True)
        del qws, bf16_t
