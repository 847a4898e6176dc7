"""Session 41, call 4: where the WS kernel (its default rings) starts to beat the op's path
below 256 rows per expert (the Triton int4 kernel there), and the op at 256-2047 rows per
expert, which now takes the WS kernel (do_bench medians, weights rotated past L2)."""
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import median_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear

CASES = [("W13 E128", 128, 1536, 2048, [1024, 2048, 3072, 4096]),
         ("W2 E128", 128, 2048, 768, [1024, 2048, 3072, 4096]),
         ("W13 TP2", 128, 768, 2048, [2048, 4096]),
         ("W13 EP8", 16, 1536, 2048, [128, 256, 512, 1024])]

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
            t_bf = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t])
            t_op = median_us([lambda q=q: w4a16_grouped_linear(x, q, counts) for q in qws])
            t_ws = median_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts) for q in qws])
            print(f"{label} M={m} ({rows / e:.0f} rows/expert): bf16 {t_bf:.1f} us, op "
                  f"{t_op:.1f} ({t_op / t_bf:.2f}x), WS {t_ws:.1f} ({t_ws / t_bf:.2f}x, "
                  f"{2 * rows * n * k / t_ws / 1e6:.0f} TFLOP/s, {t_op / t_ws:.2f}x the op's "
                  f"speed), err {err:.3g} ({'OK' if err <= 1e-2 else 'BAD'})", flush=True)
        del qws, bf16_t
