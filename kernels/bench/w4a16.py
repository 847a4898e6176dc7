"""W4A16 grouped GEMMs at every size (the forward's routes, the WS kernel, the kept operand)
and the backward's grad_input.
"""
import dataclasses

import torch

from megatron_qarl.quant import get_scheme

from ..moe_backward import grad_input_takes_ws, w4a16_grouped_grad_input
from ..w4a16_dequantize import w4a16_dequantize
from ..w4a16_gemm import w4a16_grouped_matmul
from ..w4a16_grouped_ws import (w4a16_grouped_ws, w4a16_grouped_ws_grad_input,
                                applies as w4a16_ws_applies,
                                applies_grad_input as w4a16_ws_grad_applies)
from ..w4a16_operand import w4a16_operand
from .cases import GROUPED_SHAPES, TOKENS, W4A16Copies, expert_bytes, routed_batch
from .measure import DECODE_MAX_TOKENS, STEP_CALLS, graph_output, graph_us, median_us
from .report import Table, fmt, pct_copy, rate_header, rates, tflops


def bench_w4a16_grouped(peak, check):
    scheme = get_scheme("w4a16")
    table = Table("W4A16 grouped GEMM (MoE experts, top-8 uniform routing)",
                  ["shape", "M tokens", "experts touched", "bf16 grouped_mm us",
                   "bf16 %BW", "W4A16 kernel us", *rate_header(),
                   "WS kernel us", "WS TFLOP/s", "dequant+grouped_mm us",
                   "best W4A16 / bf16 speedup",
                   "operand kept: grouped_mm us", "kept / bf16 speedup",
                   "graph us", *rate_header("graph", flops=False), "bf16 graph us",
                   "graph speedup"])
    for label, e, n, k in GROUPED_SHAPES:
        copies = W4A16Copies(scheme, e, n, k)
        ref_w = scheme.dequantize(copies.int4(e)[0]).bfloat16()  # [E, N, K], from torch
        for m in TOKENS:
            counts, rows, touched, x, offs = routed_batch(m, e, k)
            qws, bf16_t = copies.int4(touched), copies.bf16(touched)
            # the large-M path under --quant-keep-operand: operand made at first use, reused
            kept = [dataclasses.replace(q, keep_operand=True) for q in qws[:len(bf16_t)]]
            if rows <= 2048:
                want = scheme.reference_grouped_matmul(x, qws[0], counts.cpu())
            else:
                want = torch._grouped_mm(x, ref_w.transpose(1, 2), offs=offs)
            y = w4a16_grouped_matmul(x, qws[0], counts)
            check.close(f"w4a16 grouped {label} M={m}", y, want)
            t_bf16 = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs)
                                for w in bf16_t])
            t_k = median_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws])
            t_ws = t_dq = t_kept = None
            if rows >= 64 * e and w4a16_ws_applies(x, qws[0]):  # the training-size kernel
                check.close(f"w4a16 grouped WS {label} M={m}",
                            w4a16_grouped_ws(x, qws[0], counts), want)
                t_ws = median_us([lambda q=q: w4a16_grouped_ws(x, q, counts) for q in qws])
            if rows >= 4 * e:
                check.close(f"w4a16 dequant+grouped_mm {label} M={m}", torch._grouped_mm(
                    x, w4a16_dequantize(qws[0], counts).transpose(1, 2), offs=offs), want)
                check.equal(f"w4a16 kept operand {label} M={m}",
                            w4a16_operand(kept[0], counts), ref_w)
                t_dq = median_us([lambda q=q: torch._grouped_mm(
                    x, w4a16_dequantize(q, counts).transpose(1, 2), offs=offs) for q in qws])
                t_kept = median_us([lambda q=q: torch._grouped_mm(
                    x, w4a16_operand(q, counts).transpose(1, 2), offs=offs) for q in kept])
            g_k = g_bf = None
            if m <= DECODE_MAX_TOKENS:  # decode runs in CUDA graphs: no host launch cost
                check.close(f"w4a16 grouped graph {label} M={m}",
                            graph_output(lambda: w4a16_grouped_matmul(x, qws[0], counts)), want)
                g_k = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws],
                               calls=STEP_CALLS)
                g_bf = graph_us([lambda w=w: torch._grouped_mm(x, w, offs=offs)
                                 for w in bf16_t], calls=STEP_CALLS)
            flops, int4_bytes = 2 * rows * n * k, expert_bytes(touched, n, k, 128, rows, True)
            best = min(t_k, t_ws or t_k, t_dq or t_k)
            table.add(label, str(m), str(touched), t_bf16,
                      pct_copy(expert_bytes(touched, n, k, 128, rows, False), t_bf16, peak),
                      t_k, *rates(t_k, int4_bytes, peak, flops), t_ws,
                      tflops(t_ws, flops), t_dq, fmt(t_bf16 / best, ".2f"),
                      t_kept, fmt(None if t_kept is None else t_bf16 / t_kept, ".2f"), g_k,
                      *rates(g_k, int4_bytes, peak), g_bf,
                      fmt(None if g_k is None else g_bf / g_k, ".2f"))
        del copies, qws, bf16_t, kept, ref_w
    return [table]


#: tokens of the grad_input table: training micro-batches, 32 to 1024 rows an expert at E128
GRAD_TOKENS = [512, 1024, 4096, 16384]


def bench_w4a16_grad_input(peak, check):
    """The backward's grad_input (grad_out @ dequant(W)) through the op's path
    (moe_backward.w4a16_grouped_grad_input), the WS kernel and dequantize + torch._grouped_mm
    against bf16 torch._grouped_mm on the bf16 weight (the bf16 learner's grad_input). Eager
    calls, as a learner makes them: where a call's GPU time is short, do_bench times the host."""
    scheme = get_scheme("w4a16")
    table = Table("W4A16 grouped grad_input (backward, top-8 uniform routing)",
                  ["shape", "M tokens", "rows per expert", "bf16 grouped_mm us", "WS kernel us",
                   "WS TFLOP/s", "dequant+grouped_mm us", "the op's path", "op us",
                   *rate_header("op"), "op / bf16 time"])
    for label, e, n, k in GROUPED_SHAPES:
        copies = W4A16Copies(scheme, e, n, k)
        qws, bf16_t = copies.int4(e), copies.bf16(e)  # GRAD_TOKENS touch every expert
        ref_w = scheme.dequantize(qws[0]).bfloat16()
        for m in GRAD_TOKENS:
            counts, rows, _, g, offs = routed_batch(m, e, n)
            op = w4a16_grouped_grad_input(g, qws[0], counts)
            want = torch._grouped_mm(g, ref_w, offs=offs)
            check.close(f"w4a16 grad_input {label} M={m}", op, want)
            t_bf16 = median_us([lambda w=w: torch._grouped_mm(g, w.transpose(1, 2), offs=offs)
                                for w in bf16_t])
            t_ws = None
            if w4a16_ws_grad_applies(g, qws[0]):
                check.close(f"w4a16 grad_input WS {label} M={m}",
                            w4a16_grouped_ws_grad_input(g, qws[0], counts), want)
                t_ws = median_us([lambda q=q: w4a16_grouped_ws_grad_input(g, q, counts)
                                  for q in qws])
            check.close(f"w4a16 grad_input dequant+grouped_mm {label} M={m}",
                        torch._grouped_mm(g, w4a16_dequantize(qws[0], counts), offs=offs), want)
            t_dq = median_us([lambda q=q: torch._grouped_mm(g, w4a16_dequantize(q, counts),
                                                            offs=offs) for q in qws])
            t_op = median_us([lambda q=q: w4a16_grouped_grad_input(g, q, counts) for q in qws])
            path = "WS kernel" if grad_input_takes_ws(g, qws[0]) else "dequant+grouped_mm"
            flops = 2 * rows * n * k
            table.add(label, str(m), f"{rows / e:.0f}", t_bf16, t_ws,
                      tflops(t_ws, flops), t_dq, path, t_op,
                      *rates(t_op, expert_bytes(e, n, k, 128, rows, True), peak, flops),
                      fmt(t_op / t_bf16, ".2f"))
        del copies, qws, bf16_t, ref_w
    return [table]
