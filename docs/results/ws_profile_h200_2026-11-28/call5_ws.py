"""Session 41, call 5: (1) repeat the WS kernel 100 times a case at call 4's mismatching size
(W13 E128 M=1024) and others, checking each output against the reference and against the first
output's bits, with the code stage freed after its words are used (the kernel) and right after
their loads are issued (call 4's, imported as qarl_kernels.w4a16_grouped_ws_early);
(2) time the kernel around the lower end of its routing (128-256 rows per expert) against the
op's path there, and at M=4096 with two and three code stages."""
import time

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_grouped_ws as ws
from qarl_kernels import w4a16_grouped_ws_early as early
from qarl_kernels.bench import _batch, _w4a16_weights
from qarl_kernels.bench_setup import median_us
from qarl_kernels.w4a16_dequantize import w4a16_dequantize
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul

STRESS = [("W13 E128", 128, 1536, 2048, 1024), ("W2 E128", 128, 2048, 768, 1024),
          ("W13 EP8", 16, 1536, 2048, 256), ("W13 E128", 128, 1536, 2048, 4096)]
TIMED = [("W13 E128", 128, 1536, 2048, [2048, 2560, 3072, 4096]),
         ("W2 E128", 128, 2048, 768, [2048, 2560, 3072, 4096]),
         ("W13 TP2", 128, 768, 2048, [2560, 4096]),
         ("W13 EP8", 16, 1536, 2048, [256, 320, 384]),
         ("W2 EP8", 16, 2048, 768, [256, 320, 384])]


def stress(repeats=100):
    scheme = get_scheme("w4a16")
    for label, e, n, k, m in STRESS:
        torch.manual_seed(1)
        q = scheme.quantize_weight(torch.randn(e, n, k, device="cuda") * 0.05)
        counts, rows, _, x, offs = _batch(m, e, k, seed=1)
        ref = torch._grouped_mm(x, w4a16_dequantize(q, counts).transpose(1, 2), offs=offs)
        ref = ref.float()
        for name, mod in (("freed after use", ws), ("freed after issue", early)):
            first = mod.w4a16_grouped_ws(x, q, counts)
            bad = differ = 0
            worst = 0.0
            for _ in range(repeats):
                y = mod.w4a16_grouped_ws(x, q, counts)
                err = ((y.float() - ref).abs() - 2**-7 * ref.abs()).max().item()
                worst = max(worst, err)
                bad += err > 1e-2
                differ += not torch.equal(y, first)
            print(f"stress {label} M={m} {name}: {bad}/{repeats} outputs off the reference "
                  f"(worst {worst:.3g}), {differ}/{repeats} differ from the first's bits",
                  flush=True)


def timed():
    scheme = get_scheme("w4a16")
    for label, e, n, k, tokens in TIMED:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        for m in tokens:
            counts, rows, touched, x, offs = _batch(m, e, k)
            t_bf = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t])
            t_k = median_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws])
            line = (f"{label} M={m} ({rows / e:.0f} rows/expert): bf16 {t_bf:.1f} us, int4 "
                    f"kernel {t_k:.1f} ({t_k / t_bf:.2f}x)")
            for rings in ((2, 2, 2), (2, 3, 2)) if m == 4096 else ((2, 2, 2), ):
                t = median_us([lambda q=q: ws.w4a16_grouped_ws(x, q, counts, *rings)
                               for q in qws])
                line += f", WS {rings} {t:.1f} ({t / t_bf:.2f}x, {t_k / t:.2f}x the kernel's speed)"
            print(line, flush=True)
        del qws, bf16_t


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S"), flush=True)
    stress()
    timed()
