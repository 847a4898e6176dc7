"""A whole MoE experts block (fc1, SwiGLU, fc2) as the rollout engine runs it, per scheme."""
import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.base import scale_rows
from megatron_qarl.quant.ops import (composed_swiglu_experts, reference_gated_activation,
                                     swiglu_experts)

from ..register import register_cuda_kernels
from .cases import routed_batch
from .measure import STEP_CALLS, copies_for, graph_output, graph_us
from .report import Table, fmt, pct_copy, rate_header, rates


#: the experts block's layouts: (label, local experts, experts the tokens are routed over,
#: None for the local ones): E128 is EP = 1; "EP8, TP attention" one rank's 16 of 128 experts
#: for a batch of M tokens (the decode batch); "EP8" DP attention's 16 experts receiving every
#: rank's rows (M / 2 an expert)
BLOCK_LAYOUTS = [("E128", 128, None), ("EP8, TP attention", 16, 128), ("EP8", 16, None)]
#: (label, scheme, whether the fused op gives the composed reference's bits)
BLOCK_SCHEMES = [("W4A16", "w4a16", False), ("FP8", "fp8-block", False), ("INT8", "int8", True)]


def bench_experts(peak, check):
    """A whole MoE experts block without autograd (fc1, SwiGLU, fc2 with router probs), as the
    rollout engine runs it (quant.ops.swiglu_experts: each scheme's fused op, from bf16 tokens),
    against bf16 grouped_mm with torch's SwiGLU, in CUDA graphs of STEP_CALLS calls with both
    projections' weights rotated past L2. GB/s and %BW: the touched experts' weights of both
    projections, tokens in and out; TFLOP/s: both projections' 6 x rows x H x F. Each op is
    checked against the composed reference first (INT8 bit for bit), and against the scheme's
    pure-torch one: the composed reference runs the fused op's own fc2 kernel."""
    register_cuda_kernels()  # the composed reference's grouped op on CUDA (the CPU one syncs)
    hidden, ffn = 2048, 768
    header = ["experts", "M tokens", "rows an expert", "bf16 us", "bf16 %BW"]
    for name, *_ in BLOCK_SCHEMES:
        header += [f"{name} us", *rate_header(name), f"{name} speedup"]
    table = Table(f"Experts block (fc1 + SwiGLU + fc2) vs bf16, CUDA graphs of {STEP_CALLS} "
                  f"calls", header)
    for label, e, routed in BLOCK_LAYOUTS:
        masters = (torch.randn(e, 2 * ffn, hidden, device="cuda"),
                   torch.randn(e, hidden, ffn, device="cuda"))
        params = sum(w.numel() for w in masters)
        wbs = [tuple((w + i).bfloat16().transpose(1, 2) for w in masters)
               for i in range(copies_for(2 * params))]
        quantized = []
        for name, scheme_name, exact in BLOCK_SCHEMES:
            scheme = get_scheme(scheme_name)
            q0 = tuple(scheme.quantize_weight(w) for w in masters)
            nbytes = sum(q.data.numel() * q.data.element_size()
                         + q.scale.numel() * q.scale.element_size() for q in q0)
            quantized.append((name, scheme, exact, nbytes, [q0] + [
                tuple(scheme.quantize_weight(w + i) for w in masters)
                for i in range(1, copies_for(nbytes))]))
        for m in (8, 64, 128, 256, 4096):
            counts, rows, touched, x, offs = routed_batch(m, e, hidden, routed=routed)
            probs = torch.rand(rows, device="cuda")
            io, flops = rows * hidden * 4, 6 * rows * hidden * ffn  # fc1's 2F + fc2's F

            def bf16(w1, w2):
                h = reference_gated_activation(torch._grouped_mm(x, w1, offs=offs))
                y = torch._grouped_mm(h, w2, offs=offs)
                return scale_rows(y, probs, y.dtype, after_rounding=True)

            t_bf16 = graph_us([lambda w=w: bf16(*w) for w in wbs], calls=STEP_CALLS)
            cells = [label, str(m), f"{rows / e:.1f}", t_bf16,
                     pct_copy(touched * params * 2 // e + io, t_bf16, peak)]
            for name, scheme, exact, nbytes, qws in quantized:
                got = swiglu_experts(x, *qws[0], counts, probs)
                want = composed_swiglu_experts(x, *qws[0], counts, probs)
                case = f"{name} experts block {label} M={m}"
                compare = check.equal if exact else check.close_norm
                compare(case, got, want)
                check.close_norm(case + " vs torch", got,
                                 _torch_block(scheme, x, *qws[0], counts, probs))
                compare(case + " graph",
                        graph_output(lambda: swiglu_experts(x, *qws[0], counts, probs)), want)
                t = graph_us([lambda q=q: swiglu_experts(x, *q, counts, probs) for q in qws],
                             calls=STEP_CALLS)
                cells += [t, *rates(t, touched * nbytes // e + io, peak, flops),
                          fmt(t_bf16 / t, ".2f")]
            table.add(*cells)
        del wbs, quantized
    return [table]


def _torch_block(scheme, x, fc1, fc2, counts, probs):
    """The block from the scheme's pure-torch references (no kernel)."""
    counts = counts.cpu()
    h = reference_gated_activation(scheme.reference_grouped_matmul(x, fc1, counts))
    return scheme.reference_grouped_matmul(h, fc2, counts, probs)
