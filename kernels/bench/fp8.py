"""FP8 block GEMMs at training sizes, and the two places its activation quantizer can move
to: the SwiGLU before fc2, and before the tokens' permutation.
"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import reference_gated_activation

from ..fp8_gemm import (fp8_block_grouped_linear, fp8_block_grouped_matmul,
                        fp8_block_grouped_packed, fp8_block_linear, fp8_block_matmul,
                        quantize_linear_input)
from ..fp8_grouped_ws import applies as ws_applies
from ..fp8_quantize import fp8_quantize_activation, fp8_quantize_packed_rows, fp8_quantize_swiglu
from .cases import DENSE_LARGE_SHAPES, GROUPED_SHAPES, TOP_K, fp8_weights
from .measure import graph_us, route
from .report import Table, fmt, rate_header, rates


#: rounds of the FP8 table's four graphs, each column the median: one round read the same
#: dense call 84 us and 110 us minutes apart (session 49, calls 7-8)
FP8_ROUNDS = 3


def bench_fp8(peak, check):
    """Every time in CUDA graphs (the dense op is host-bound below ~100 us of GPU work
    otherwise), with the activation quantizer timed alone: a producer such as the norm or
    SwiGLU could emit FP8 directly, and 'GEMM alone' times the GEMM on quantized inputs."""
    scheme = get_scheme("fp8-block")
    table = Table(f"FP8 block GEMM (1x128 activations x 128x128 weights) vs bf16, CUDA graphs, "
                  f"medians of {FP8_ROUNDS} rounds",
                  ["op", "shape", "fp8 us (act quant included)", *rate_header(), "act quant us",
                   "GEMM alone us", "bf16 us", "speedup", "GEMM alone speedup"])

    def add(op, shape, nbytes, flop, fp8_fn, gemm_fn, bf16_fn, quant_fn):
        """nbytes: the FP8 weights, bf16 x in and y out."""
        rounds = [[graph_us([fn]) for fn in (fp8_fn, gemm_fn, bf16_fn, quant_fn)]
                  for _ in range(FP8_ROUNDS)]
        t8, tg, tb, tq = (statistics.median(column) for column in zip(*rounds))
        table.add(op, shape, t8, *rates(t8, nbytes, peak, flop), tq, tg, tb,
                  fmt(tb / t8, ".2f"), fmt(tb / tg, ".2f"))

    for label, m, n, k in DENSE_LARGE_SHAPES:
        shape = " ".join(filter(None, (label, f"{m}x{n}x{k}")))
        w = torch.randn(n, k, device="cuda")
        qw = scheme.quantize_weight(w)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        check.close_norm(f"fp8 dense {shape}", fp8_block_linear(x, qw),
                         scheme.reference_matmul(x, qw))
        wb = w.bfloat16()
        xq, xs = quantize_linear_input(x, qw)
        check.equal(f"fp8 dense GEMM alone {shape}", fp8_block_matmul(xq, xs, qw)[:m],
                    fp8_block_linear(x, qw))
        add("dense scaled_mm", shape, n * k + 2 * m * (k + n), 2 * m * n * k,
            lambda: fp8_block_linear(x, qw),
            lambda: fp8_block_matmul(xq, xs, qw), lambda: x @ wb.t(),
            lambda: quantize_linear_input(x, qw))
    for label, e, n, k in GROUPED_SHAPES[:4]:
        qw, wb = fp8_weights(scheme, e, n, k)
        for m in (1024, 4096, 16384, 65536):
            counts = route(m, e, TOP_K)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            y = fp8_block_grouped_linear(x, qw, counts)
            check.close_norm(f"fp8 grouped {label} M={m}", y,
                             scheme.reference_grouped_matmul(x, qw, counts.cpu()))
            kernel = "grouped Gluon WS" if ws_applies(x, qw) else "grouped Triton"
            xq, xs = fp8_quantize_activation(x)
            check.equal(f"fp8 grouped GEMM alone {label} M={m}",
                        fp8_block_grouped_matmul(xq, xs, qw, counts), y)
            add(kernel, f"{label} M={m}", e * n * k + 2 * rows * (k + n), 2 * rows * n * k,
                lambda: fp8_block_grouped_linear(x, qw, counts),
                lambda: fp8_block_grouped_matmul(xq, xs, qw, counts),
                lambda: torch._grouped_mm(x, wb, offs=offs), lambda: fp8_quantize_activation(x))
    return [table]


def bench_fp8_swiglu(peak, check):
    """MoE fc2 with the experts' activation before it, in CUDA graphs: torch's SwiGLU then the
    bf16 GEMM, against the FP8 GEMM fed by torch's SwiGLU and the activation quantizer, and
    by the SwiGLU that writes FP8 itself (fp8_quantize_swiglu: same codes, one pass)."""
    scheme = get_scheme("fp8-block")
    table = Table("FP8 SwiGLU + fc2 vs bf16 (CUDA graphs)",
                  ["shape", "M tokens", "bf16: SwiGLU + grouped_mm us",
                   "fp8: SwiGLU + quantizer + GEMM us", "fp8: FP8-writing SwiGLU + GEMM us",
                   *rate_header("fused"), "fused speedup", "fused fp8 speedup over bf16"])
    for label, e, n, k in [s for s in GROUPED_SHAPES[:4] if s[0].startswith("W2")]:
        qw, wb = fp8_weights(scheme, e, n, k)
        for m in (1024, 4096, 16384):
            counts = route(m, e, TOP_K)
            rows = int(counts.sum())
            h = torch.randn(rows, 2 * k, device="cuda", dtype=torch.bfloat16)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            fused = fp8_quantize_swiglu(h)
            unfused = fp8_quantize_activation(reference_gated_activation(h))
            check.equal(f"fp8 swiglu codes {label} M={m}", fused[0].view(torch.uint8),
                        unfused[0].view(torch.uint8))
            check.equal(f"fp8 swiglu scales {label} M={m}", fused[1], unfused[1])
            check.equal(f"fp8 swiglu + fc2 {label} M={m}",
                        fp8_block_grouped_matmul(*fused, qw, counts),
                        fp8_block_grouped_linear(reference_gated_activation(h), qw, counts))
            t_bf16 = graph_us([lambda: torch._grouped_mm(
                reference_gated_activation(h), wb, offs=offs)])
            t_unfused = graph_us([lambda: fp8_block_grouped_linear(
                reference_gated_activation(h), qw, counts)])
            t_fused = graph_us([lambda: fp8_block_grouped_matmul(
                *fp8_quantize_swiglu(h), qw, counts)])
            table.add(label, str(m), t_bf16, t_unfused, t_fused,
                      *rates(t_fused, e * n * k + rows * (4 * k + 2 * n), peak, 2 * rows * n * k),
                      fmt(t_unfused / t_fused, ".2f"), fmt(t_bf16 / t_fused, ".2f"))
        del qw, wb
    return [table]


def bench_fp8_dispatch(peak, check):
    """MoE fc1 from the layer's unpermuted tokens, in CUDA graphs: bf16 (permute, GEMM), FP8
    quantizing the permuted copies (permute, quantizer, GEMM), and FP8 quantizing each token
    once before the permutation, which then moves packed FP8 rows (layers.token_dispatch:
    quantizer, permute, GEMM). The permutation copies each token top-k times. E128 is EP = 1;
    EP8 is one rank's share of EP = 8 with M tokens of its own, routed among its 16 experts so
    that it receives 8M rows, as the GEMM rows above assume: the single-GPU permutation stands
    for the dispatcher's permutation and all-to-all, which move the same bytes per rank."""
    scheme = get_scheme("fp8-block")
    table = Table("FP8 fc1 from unpermuted tokens: quantized before or after the permutation "
                  "(CUDA graphs)",
                  ["shape", "M tokens", "bf16: permute + grouped_mm us",
                   "fp8: permute + quantizer + GEMM us", "fp8: quantizer + permute + GEMM us",
                   *rate_header("quantizing first"), "quantizing first: speedup",
                   "quantizing first: speedup over bf16"])
    for label, e, n, k in [s for s in GROUPED_SHAPES if s[0] in ("W13 E128", "W13 EP8")]:
        qw, wb = fp8_weights(scheme, e, n, k)
        for m in (1024, 4096, 16384):
            tokens = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            scores = torch.rand(m, e, device="cuda")
            experts = scores.topk(TOP_K, dim=1).indices.flatten()
            order = torch.argsort(experts, stable=True)
            rows_of = (order // TOP_K).contiguous()  # the token of each permuted row
            counts = torch.bincount(experts, minlength=e).to(torch.int32)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            after = fp8_block_grouped_linear(tokens.index_select(0, rows_of), qw, counts)
            before = fp8_block_grouped_packed(
                fp8_quantize_packed_rows(tokens).index_select(0, rows_of), qw, counts)
            check.equal(f"fp8 fc1 quantized before permute {label} M={m}", before, after)
            t_bf16 = graph_us([lambda: torch._grouped_mm(tokens.index_select(0, rows_of), wb,
                                                         offs=offs)])
            t_after = graph_us([lambda: fp8_block_grouped_linear(
                tokens.index_select(0, rows_of), qw, counts)])
            t_before = graph_us([lambda: fp8_block_grouped_packed(
                fp8_quantize_packed_rows(tokens).index_select(0, rows_of), qw, counts)])
            rows = m * TOP_K
            table.add(label, str(m), t_bf16, t_after, t_before,
                      *rates(t_before, e * n * k + 2 * m * k + 2 * rows * n, peak,
                             2 * rows * n * k),
                      fmt(t_after / t_before, ".2f"), fmt(t_bf16 / t_before, ".2f"))
        del qw, wb
    return [table]
