"""INT8 W8A8 grouped GEMMs at decode and training sizes."""
import torch

from megatron_qarl.quant import get_scheme

from ..int8_gemm import int8_grouped_linear, int8_matmul
from ..int8_quantize import int8_quantize_activation
from .cases import GROUPED_SHAPES, routed_batch
from .measure import STEP_CALLS, copies_for, graph_us
from .report import Table, fmt, rate_header, rates


def bench_int8(peak, check):
    """INT8 W8A8 against bf16, all in CUDA graphs of STEP_CALLS calls with the weights rotated
    past L2: decode sizes read weights (int8 halves bf16's bytes), training sizes run the int8
    tensor cores. Dense calls: bench_dense. Each case is checked bit for bit against the
    reference first."""
    scheme = get_scheme("int8")
    table = Table(f"INT8 W8A8 GEMM (per-token activations x per-channel weights) vs bf16, "
                  f"CUDA graphs of {STEP_CALLS} calls",
                  ["op", "shape", "M tokens", "int8 us (act quant included)", *rate_header(),
                   "act quant us", "GEMM alone us", "bf16 us", "speedup",
                   "GEMM alone speedup"])

    def add(op, shape, m, nbytes, flop, qws, wbs, int8_fn, gemm_fn, bf16_fn, x):
        t8 = graph_us([lambda q=q: int8_fn(q) for q in qws], calls=STEP_CALLS)
        tg = graph_us([lambda q=q: gemm_fn(q) for q in qws], calls=STEP_CALLS)
        tb = graph_us([lambda w=w: bf16_fn(w) for w in wbs], calls=STEP_CALLS)
        tq = graph_us([lambda: int8_quantize_activation(x)], calls=STEP_CALLS)
        table.add(op, shape, str(m), t8, *rates(t8, nbytes, peak, flop), tq, tg, tb,
                  fmt(tb / t8, ".2f"), fmt(tb / tg, ".2f"))

    def weights(master):
        qws = [scheme.quantize_weight(master + i) for i in range(copies_for(master.numel()))]
        return qws, [(master + i).bfloat16() for i in range(copies_for(2 * master.numel()))]

    for label, e, n, k in GROUPED_SHAPES[:4]:
        qws, wbs = weights(torch.randn(e, n, k, device="cuda"))
        wbs = [w.transpose(1, 2) for w in wbs]
        for m in (8, 64, 256, 4096, 16384):
            counts, rows, touched, x, offs = routed_batch(m, e, k)
            y = int8_grouped_linear(x, qws[0], counts)
            check.equal(f"int8 grouped {label} M={m}", y,
                        scheme.reference_grouped_matmul(x, qws[0], counts.cpu()))
            xq, xs = int8_quantize_activation(x)
            check.equal(f"int8 grouped GEMM alone {label} M={m}",
                        int8_matmul(xq, xs, qws[0], counts), y)
            add("grouped", label, m, touched * n * (k + 4) + rows * (k + n) * 2,
                2 * rows * n * k, qws, wbs, lambda q: int8_grouped_linear(x, q, counts),
                lambda q: int8_matmul(xq, xs, q, counts),
                lambda w: torch._grouped_mm(x, w, offs=offs), x)
        del qws, wbs
    return [table]
