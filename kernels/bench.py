"""`python -m qarl_kernels.bench`: check every kernel against the reference on the GPU, time it
against torch bf16 in the same run, print the tables and write docs/benchmarks.md.

Shapes are Qwen3-30B-A3B's expert GEMMs (E=128 gate+up N=1536 K=2048, down N=2048 K=768),
EP8 (16 local experts) and TP2 (N halved), uniform top-8 routing of M tokens; the decode tables
also time EP8 beside TP attention (EP8_TP_ATTENTION).
"""
import argparse
import dataclasses
import datetime
import importlib
import os
import platform
import statistics

import torch
import triton

from megatron_qarl.quant import NoQuant, get_scheme
from megatron_qarl.quant.ops import (
    composed_swiglu_experts, reference_gated_activation, reference_race_argmax,
    reference_routed_sum, swiglu_experts,
)

from .bf16_quantize import bf16_quantize
from .bench_setup import (DECODE_MAX_TOKENS, STEP_CALLS, ceilings, copies_for, graph_us,
                          median_us, route)
from .fp8_gemm import (fp8_block_grouped_linear, fp8_block_grouped_matmul,
                       fp8_block_grouped_packed, fp8_block_linear, fp8_block_matmul,
                       quantize_linear_input)
from .fp8_grouped_ws import applies as ws_applies
from .w4a16_grouped_ws import applies as w4a16_ws_applies, \
    applies_grad_input as w4a16_ws_grad_applies, w4a16_grouped_ws, w4a16_grouped_ws_grad_input
from .fp8_quantize import (fp8_block_quantize, fp8_quantize_activation, fp8_quantize_packed_rows,
                           fp8_quantize_swiglu)
from .gluon_hopper import is_hopper
from .int8_gemm import dense_tiles as int8_dense_tiles, int8_grouped_linear, int8_linear, \
    int8_matmul
from .int8_quantize import int8_quantize, int8_quantize_activation
from .moe_backward import WS_GRAD_ROWS_PER_EXPERT, grad_input_takes_ws, w4a16_grouped_grad_input
from .race_argmax import race_argmax
from .register import register_cuda_kernels
from .routed_sum import routed_sum
from .stream_floor import BLOCK_N as FLOOR_ROWS, stream_words
from .swiglu import gated_silu, swiglu_forward
from .token_logprobs import inverse_temperature, sample_with_logprobs, token_logprobs_forward
from .w4a16_dequantize import w4a16_dequantize
from .w4a16_gemm import (DEQUANT_ROWS_PER_EXPERT, KEPT_OPERAND_ROWS_PER_EXPERT,
                         WS_ROWS_PER_EXPERT, dense_config, w4a16_dense_gluon,
                         w4a16_grouped_matmul, w4a16_grouped_swiglu, w4a16_linear)
from .w4a16_gluon_rules import DENSE_GLUON_MAX_ROWS
from .w4a16_lanes import to_lane_order
from .w4a16_operand import w4a16_operand
from .w4a16_quantize import w4a16_quantize

GROUPED_SHAPES = [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768),
                  ("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768),
                  ("W13 TP2", 128, 768, 2048)]
TOKENS = [1, 8, 64, 256, 1024, 4096, 16384]
#: EP8 beside TP attention: every rank holds the batch's M tokens, routed top-8 over all 128
#: experts, and multiplies the rows of its 16 (M / 16 per expert). The plain EP8 rows are DP
#: attention's: a rank receives 8M rows, M / 2 per expert (see bench_fp8_dispatch).
EP8_TP_ATTENTION = [("W13 EP8, TP attention", 16, 1536, 2048),
                    ("W2 EP8, TP attention", 16, 2048, 768)]
ROUTED_EXPERTS = dict.fromkeys((label for label, *_ in EP8_TP_ATTENTION), 128)
DECODE_SHAPES = GROUPED_SHAPES + EP8_TP_ATTENTION
DECODE_TOKENS = [1, 8, 64, 128, DECODE_MAX_TOKENS]
TOP_K = 8
#: the decode table's uneven routing (bench_setup.route): the busiest expert takes about 4x
#: the mean at E128 from 256 tokens on
DECODE_SKEW = 0.5
#: decode rows are medians over this many routing seeds: one routing's tile count can fall
#: just inside a wave or a persistent grid's round and another's just past it (round 13)
DECODE_SEEDS = 4


class Checker:
    """Counts kernels checked against the reference; stops the run on a mismatch."""

    def __init__(self):
        self.checked, self.failed = [], []

    def close(self, name, got, want):
        try:
            torch.testing.assert_close(got.float(), want.float(), rtol=2**-7, atol=1e-2)
            self.checked.append(name)
        except AssertionError as err:
            self._fail(name, " ".join(str(err).split("\n")[1:4]))

    def close_norm(self, name, got, want, tol=1e-2):
        """||got - want|| / ||want||: for FP8 GEMMs, whose Hopper tensor-core accumulation is
        coarser than fp32 (a few outputs near zero differ by more than a bf16 ulp)."""
        err = float((got.float() - want.float()).norm() / want.float().norm())
        if err < tol:
            self.checked.append(name)
        else:
            self._fail(name, f"relative error {err:.2e} (tolerance {tol})")

    def equal(self, name, got, want):
        if torch.equal(got, want):
            self.checked.append(name)
        else:
            self._fail(name, f"{int((got != want).sum())} of {got.numel()} elements differ")

    def _fail(self, name, why):
        self.failed.append(f"{name}: {why}")
        print("MISMATCH", self.failed[-1], flush=True)


def _fmt(v, spec=".1f"):
    return "—" if v is None else format(v, spec)


class Table:
    def __init__(self, title, header):
        self.title, self.header, self.rows = title, header, []

    def add(self, *cells):
        self.rows.append([c if isinstance(c, str) else _fmt(c) for c in cells])
        print(" | ".join(self.rows[-1]), flush=True)

    def markdown(self):
        lines = [f"### {self.title}", "", "| " + " | ".join(self.header) + " |",
                 "|" + "---|" * len(self.header)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in self.rows]) + "\n"


def _expert_bytes(touched, n, k, group, x_rows, int4):
    w = touched * (n * k // 2 + n * (k // group) * 2) if int4 else touched * n * k * 2
    return w + x_rows * k * 2 + x_rows * n * 2


def _pct_copy(nbytes, us, peak):
    """Bytes moved in `us` microseconds as % of the measured copy bandwidth."""
    return 100 * nbytes / us / 1e3 / peak["copy_GBps"]


def _w4a16_weights(scheme, e, n, k):
    """Rotated int4 copies of one layer's experts and bf16 [E, K, N] views of as many as the
    bf16 rotation needs."""
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    int4_bytes = q0.data.numel() * 4 + q0.scale.numel() * 2
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(1, copies_for(int4_bytes))]
    bf16_t = [w4a16_dequantize(q).transpose(1, 2) for q in qws[:copies_for(e * n * k * 2)]]
    return qws, bf16_t


def _batch(m, e, k, skew=0.0, seed=0, routed=None):
    """counts, rows, experts touched, x, offsets of M tokens routed top-8 over E experts (or
    over `routed` experts, of which these are the first E)."""
    counts = route(m, routed or e, TOP_K, seed=seed, skew=skew, local=e if routed else None)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    return (counts, int(counts.sum()), int((counts > 0).sum()), x,
            torch.cumsum(counts, 0, dtype=torch.int32))


def bench_w4a16_grouped(peak, check):
    scheme = get_scheme("w4a16")
    table = Table("W4A16 grouped GEMM (MoE experts, top-8 uniform routing)",
                  ["shape", "M tokens", "experts touched", "bf16 grouped_mm us",
                   "bf16 %BW", "W4A16 kernel us", "%BW", "TFLOP/s", "% bf16 peak",
                   "WS kernel us", "WS TFLOP/s", "dequant+grouped_mm us",
                   "best W4A16 / bf16 speedup",
                   "operand kept: grouped_mm us", "kept / bf16 speedup",
                   "graph us", "graph %BW", "bf16 graph us", "graph speedup"])
    for label, e, n, k in GROUPED_SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        # the large-M path under --quant-keep-operand: operand made at first use, then reused
        kept = [dataclasses.replace(q, keep_operand=True) for q in qws[:len(bf16_t)]]
        for m in TOKENS:
            counts, rows, touched, x, offs = _batch(m, e, k)
            y = w4a16_grouped_matmul(x, qws[0], counts)
            if rows <= 2048:
                check.close(f"w4a16 grouped {label} M={m}", y,
                            scheme.reference_grouped_matmul(x, qws[0], counts.cpu()))
            else:
                ref_w = scheme.dequantize(qws[0]).bfloat16().transpose(1, 2)
                check.close(f"w4a16 grouped {label} M={m}", y,
                            torch._grouped_mm(x, ref_w, offs=offs))
                del ref_w
            t_bf16 = median_us([lambda w=w: torch._grouped_mm(x, w, offs=offs)
                                for w in bf16_t])
            t_k = median_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws])
            t_ws = t_dq = t_kept = None
            if rows >= 64 * e and w4a16_ws_applies(x, qws[0]):  # the training-size kernel
                check.close(f"w4a16 grouped WS {label} M={m}",
                            w4a16_grouped_ws(x, qws[0], counts), y)
                t_ws = median_us([lambda q=q: w4a16_grouped_ws(x, q, counts) for q in qws])
            if rows >= 4 * e:
                t_dq = median_us([lambda q=q: torch._grouped_mm(
                    x, w4a16_dequantize(q, counts).transpose(1, 2), offs=offs) for q in qws])
                t_kept = median_us([lambda q=q: torch._grouped_mm(
                    x, w4a16_operand(q, counts).transpose(1, 2), offs=offs) for q in kept])
                check.equal(f"w4a16 kept operand {label} M={m}", kept[0].operand,
                            bf16_t[0].transpose(1, 2))
            g_k = g_bf = g_bw = None
            if m <= DECODE_MAX_TOKENS:  # decode runs in CUDA graphs: no host launch cost
                g_k = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws],
                               calls=STEP_CALLS)
                g_bf = graph_us([lambda w=w: torch._grouped_mm(x, w, offs=offs)
                                 for w in bf16_t], calls=STEP_CALLS)
                g_bw = _pct_copy(_expert_bytes(touched, n, k, 128, rows, True), g_k, peak)
            flops = 2 * rows * n * k / t_k / 1e6
            best = min(t_k, t_ws or t_k, t_dq or t_k)
            table.add(label, str(m), str(touched), t_bf16,
                      _pct_copy(_expert_bytes(touched, n, k, 128, rows, False), t_bf16, peak),
                      t_k, _pct_copy(_expert_bytes(touched, n, k, 128, rows, True), t_k, peak),
                      flops, 100 * flops / peak["bf16_TFLOPs"], t_ws,
                      None if t_ws is None else 2 * rows * n * k / t_ws / 1e6, t_dq,
                      _fmt(t_bf16 / best, ".2f"),
                      t_kept, _fmt(None if t_kept is None else t_bf16 / t_kept, ".2f"), g_k, g_bw,
                      g_bf, _fmt(None if g_k is None else g_bf / g_k, ".2f"))
        del qws, bf16_t, kept
    return [table]


#: tokens of the grad_input table: training micro-batches, 32 to 1024 rows an expert at E128
GRAD_TOKENS = [512, 1024, 4096, 16384]


def bench_w4a16_grad_input(check):
    """The backward's grad_input (grad_out @ dequant(W)) through the op's path
    (moe_backward.w4a16_grouped_grad_input), the WS kernel and dequantize + torch._grouped_mm
    against bf16 torch._grouped_mm on the bf16 weight (the bf16 learner's grad_input). Eager
    calls, as a learner makes them: where a call's GPU time is short, do_bench times the host."""
    scheme = get_scheme("w4a16")
    table = Table("W4A16 grouped grad_input (backward, top-8 uniform routing)",
                  ["shape", "M tokens", "rows per expert", "bf16 grouped_mm us", "WS kernel us",
                   "WS TFLOP/s", "dequant+grouped_mm us", "the op's path", "op us",
                   "op / bf16 time"])
    for label, e, n, k in GROUPED_SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        ref_w = scheme.dequantize(qws[0]).bfloat16()
        for m in GRAD_TOKENS:
            counts, rows, _, g, offs = _batch(m, e, n)
            op = w4a16_grouped_grad_input(g, qws[0], counts)
            check.close(f"w4a16 grad_input {label} M={m}", op,
                        torch._grouped_mm(g, ref_w, offs=offs))
            t_bf16 = median_us([lambda w=w: torch._grouped_mm(g, w.transpose(1, 2), offs=offs)
                                for w in bf16_t])
            t_ws = None
            if w4a16_ws_grad_applies(g, qws[0]):
                check.close(f"w4a16 grad_input WS {label} M={m}",
                            w4a16_grouped_ws_grad_input(g, qws[0], counts), op)
                t_ws = median_us([lambda q=q: w4a16_grouped_ws_grad_input(g, q, counts)
                                  for q in qws])
            t_dq = median_us([lambda q=q: torch._grouped_mm(g, w4a16_dequantize(q, counts),
                                                            offs=offs) for q in qws])
            t_op = median_us([lambda q=q: w4a16_grouped_grad_input(g, q, counts) for q in qws])
            path = "WS kernel" if grad_input_takes_ws(g, qws[0]) else "dequant+grouped_mm"
            table.add(label, str(m), f"{rows / e:.0f}", t_bf16, t_ws,
                      None if t_ws is None else 2 * rows * n * k / t_ws / 1e6, t_dq, path, t_op,
                      _fmt(t_op / t_bf16, ".2f"))
        del qws, bf16_t, ref_w
    return [table]


def bench_w4a16_decode(peak, check, compare, skew=0.0):
    """Decode sizes only: this W4A16 kernel and older versions of it (modules named by
    --compare, each with a w4a16_grouped_matmul) against bf16 torch._grouped_mm, all in CUDA
    graphs of STEP_CALLS calls, as a decoding engine runs them: under ~50 us of GPU time
    do_bench measures the host (the Triton launch of a wrapper with ~20 arguments costs about as
    much). The last columns time this kernel and bf16 with one call per graph. Each cell is the
    median over DECODE_SEEDS routings, with this kernel's range beside it. skew: routing
    (route); the tile rules see only the row count, so uneven loads test how they hold."""
    scheme = get_scheme("w4a16")
    kernels = [("this", w4a16_grouped_matmul)] + [
        (name.rsplit(".", 1)[-1], importlib.import_module(name).w4a16_grouped_matmul)
        for name in compare]
    header = ["shape", "M tokens", "experts touched", "rows: busiest expert / mean", "bf16 us",
              "bf16 %BW", "int4 stream floor us", "floor %BW"]
    for name, _ in kernels:
        header += [f"{name} us", f"{name} %BW", f"{name} / bf16"]
    header += ["this us: range over routings", "1 call/graph: bf16 us", "this us",
               "this / bf16"]
    routing = f"skewed routing ({skew})" if skew else "uniform routing"
    table = Table(f"W4A16 decode, {routing}, medians of {DECODE_SEEDS} routings (CUDA graphs of "
                  f"{STEP_CALLS} calls)", header)
    for label, e, n, k in DECODE_SHAPES:
        qws, bf16_t = _w4a16_weights(scheme, e, n, k)
        # beside TP attention one token mostly reaches none of the rank's experts: no M=1
        tokens = DECODE_TOKENS[1:] if label in ROUTED_EXPERTS else DECODE_TOKENS
        for m in tokens:
            runs = [_decode_run(scheme, label, (e, n, k), m, skew, seed, qws, bf16_t, kernels,
                                check, peak) for seed in range(DECODE_SEEDS)]
            touched = [r["touched"] for r in runs]
            cells = [label, str(m), f"{min(touched)}-{max(touched)}",
                     f"{max(r['busiest'] for r in runs)} / {runs[0]['rows'] / e:.1f}"]
            cells += [_median(runs, key) for key in ("bf16", "bf16_bw", "floor", "floor_bw")]
            for name, _ in kernels:
                if any(r[name] is None for r in runs):
                    cells += ["failed", "—", "—"]
                    continue
                cells += [_median(runs, name), _median(runs, f"{name}_bw"),
                          _fmt(statistics.median(r["bf16"] / r[name] for r in runs), ".2f")]
            times = [r["this"] for r in runs]
            spread = "failed" if None in times else f"{min(times):.1f}-{max(times):.1f}"
            single, single_bf16 = _median(runs, "single"), _median(runs, "single_bf16")
            table.add(*cells, spread, single_bf16, single, _fmt(single_bf16 / single, ".2f"))
        del qws, bf16_t
    return [table]


def _median(runs, key):
    values = [r[key] for r in runs]
    return None if None in values else statistics.median(values)


def _decode_run(scheme, label, shape, m, skew, seed, qws, bf16_t, kernels, check, peak):
    """One routing of a decode row: times (graphs of STEP_CALLS calls, and of one call) and
    % of copy bandwidth, each kernel checked against the reference first."""
    e, n, k = shape
    counts, rows, touched, x, offs = _batch(m, e, k, skew, seed, ROUTED_EXPERTS.get(label))
    bf16_calls = [lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t]
    floor = _stream_floor_us(touched, n, k)
    run = {"touched": touched, "busiest": int(counts.max()), "rows": rows,
           "bf16": graph_us(bf16_calls, calls=STEP_CALLS), "floor": floor,
           "floor_bw": None if floor is None else _pct_copy(touched * n * k / 2, floor, peak)}
    run["bf16_bw"] = _pct_copy(_expert_bytes(touched, n, k, 128, rows, False), run["bf16"], peak)
    want = scheme.reference_grouped_matmul(x, qws[0], counts.cpu())
    routing = f"skew {skew} seed {seed}"
    for name, fn in kernels:
        try:
            check.close(f"w4a16 decode {routing} {name} {label} M={m}", fn(x, qws[0], counts),
                        want)
            t = graph_us([lambda q=q: fn(x, q, counts) for q in qws], calls=STEP_CALLS)
        except Exception as err:  # a version this Triton cannot compile or launch
            print(f"{name} {label} M={m} failed: {str(err).splitlines()[0][:200]}")
            run[name] = None
            continue
        run[name] = t
        run[f"{name}_bw"] = _pct_copy(_expert_bytes(touched, n, k, 128, rows, True), t, peak)
    run["single_bf16"] = graph_us(bf16_calls)
    run["single"] = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in qws])
    return run


def _stream_floor_us(touched, n, k):
    """A decode row's stream-only floor (stream_floor: its touched experts' int4 words brought
    into shared memory by TMA, nothing else, calls overlapped as PDL allows), in graphs of
    STEP_CALLS calls; Hopper only."""
    if not is_hopper(torch.device("cuda")):
        return None
    words = [torch.randint(-2**31, 2**31 - 1, (touched * n, k // 8), dtype=torch.int32,
                           device="cuda") for _ in range(copies_for(touched * n * k // 2))]
    out = torch.empty(touched * n // FLOOR_ROWS, dtype=torch.int32, device="cuda")
    return graph_us([lambda w=w: stream_words(w, out) for w in words], calls=STEP_CALLS)


def bench_swiglu(check):
    """fc1 (gate+up) with the experts' activation and router probs, in CUDA graphs: the int4
    GEMM then torch's SwiGLU (quant.ops.reference_gated_activation), against the fused
    epilogue, whose output must be the same bits."""
    scheme = get_scheme("w4a16")
    table = Table(f"W4A16 fc1 + SwiGLU + router probs, fused vs unfused (CUDA graphs of "
                  f"{STEP_CALLS} calls)",
                  ["shape", "M tokens", "GEMM then SwiGLU us", "fused us", "speedup"])
    for label, e, n, k in [s for s in GROUPED_SHAPES if s[0].startswith("W13")]:
        qws, _ = _w4a16_weights(scheme, e, n, k)
        for m in DECODE_TOKENS:
            counts, rows, _, x, _ = _batch(m, e, k)
            probs = torch.rand(rows, device="cuda")

            def unfused(q):
                return reference_gated_activation(w4a16_grouped_matmul(x, q, counts), probs)

            check.equal(f"w4a16 fused swiglu {label} M={m}",
                        w4a16_grouped_swiglu(x, qws[0], counts, probs), unfused(qws[0]))
            t_unfused = graph_us([lambda q=q: unfused(q) for q in qws], calls=STEP_CALLS)
            t_fused = graph_us([lambda q=q: w4a16_grouped_swiglu(x, q, counts, probs)
                                for q in qws], calls=STEP_CALLS)
            table.add(label, str(m), t_unfused, t_fused, _fmt(t_unfused / t_fused, ".2f"))
        del qws
    return [table]


def bench_launch_floor():
    """Time per call of one tiny kernel: one per graph, and STEP_CALLS per graph."""
    z = torch.zeros(1, device="cuda")
    return graph_us([lambda: z.add_(1)]), graph_us([lambda: z.add_(1)], calls=STEP_CALLS)


def bench_quantize(peak, check, sweep):
    """W4A16 twice: the serving codes alone, and with the Hopper kernels' lane order written
    beside them (what the learner's cache runs for stacked experts on Hopper); the torch
    reference of the second includes w4a16_lanes' reorder. The kernels are timed in CUDA
    graphs (GPU time: do_bench timed the host where it was slower, which read the in-place
    FP8 W2 at 250-540 us where graphs and Nsight Compute read 164-181; round 49)."""
    table = Table("Fused quantize-and-pack of one layer's experts (fp32 master; CUDA graphs of "
                  f"{STEP_CALLS} calls, the torch reference by do_bench)",
                  ["weight", "format", "kernel us", "GB/s", "% copy BW",
                   "torch reference us", "speedup"])
    w4a16, fp8, int8 = get_scheme("w4a16"), get_scheme("fp8-block"), get_scheme("int8")
    for label, shape in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        master = torch.randn(shape, device="cuda")
        params = master.numel()
        for name, scheme, fn, out_bytes, kw, reference in [
            ("w4a16-g128", w4a16, w4a16_quantize, params * (0.5 + 2 / 128),
             {"lane_order": False}, w4a16.quantize_weight),
            ("w4a16-g128 + lane order", w4a16, w4a16_quantize, params * (1 + 2 / 128),
             {"lane_order": True},
             lambda w, **kw: to_lane_order(w4a16.quantize_weight(w, **kw).data)),
            ("fp8-block", fp8, fp8_block_quantize, params * 1.0, {}, fp8.quantize_weight),
            ("int8", int8, int8_quantize, params * (1 + 4 / shape[-1]), {},
             int8.quantize_weight),
        ]:
            got, want = fn(master, scheme, **kw), scheme.quantize_weight(master)
            check.equal(f"{name} quantize {label}", got.data.view(torch.uint8),
                        want.data.view(torch.uint8))
            check.equal(f"{name} scales {label}", got.scale, want.scale)
            if kw.get("lane_order"):
                check.equal(f"{name} lanes {label}", got.lane_codes[1],
                            to_lane_order(want.data))
            variants = [("", kw)]
            if sweep and name == "w4a16-g128":
                variants = [(f" rows{b}", {"block_rows": b, **kw}) for b in (8, 16, 32, 64)]
            for tag, options in variants:
                t = graph_us([lambda: fn(master, scheme, check_finite=False, **options)],
                             calls=STEP_CALLS)
                gbps = (params * 4 + out_bytes) / t / 1e3
                t_ref = median_us([lambda: reference(master, check_finite=False)])
                table.add(label, name + tag, t, gbps, 100 * gbps / peak["copy_GBps"], t_ref,
                          _fmt(t_ref / t, ".1f"))
        del master
    return [table, bench_quantize_in_place(peak, check)]


def bench_quantize_in_place(peak, check):
    """The layers' per-step re-quantization: one bf16 master an expert (a Parameter each, as
    Megatron's SequentialMLP keeps them), read in place through expert_masters' table, against
    torch.stack first (the path before session 51). %copy counts the in-place bytes. In CUDA
    graphs: GPU time; the table of 128 masters costs about 0.1 ms of host time a call (H200
    machine, round 49), hidden where the host runs ahead of the step."""
    table = Table("Quantize of one layer's experts from one bf16 master an expert: read in "
                  f"place vs torch.stack first (CUDA graphs of {STEP_CALLS} calls)",
                  ["weight", "format", "in place us", "% copy BW", "stack + kernel us",
                   "speedup"])
    schemes = [("w4a16-g128 + lane order", get_scheme("w4a16"), w4a16_quantize,
                lambda params, k: params * (1 + 2 / 128), {"lane_order": True}),
               ("fp8-block", get_scheme("fp8-block"), fp8_block_quantize,
                lambda params, k: params * 1.0, {}),
               ("int8", get_scheme("int8"), int8_quantize,
                lambda params, k: params * (1 + 4 / k), {}),
               ("none (bf16 grouped)", NoQuant(), bf16_quantize,
                lambda params, k: params * 2.0, {})]
    for label, (e, n, k) in [("W13 E128", (128, 1536, 2048)), ("W2 E128", (128, 2048, 768))]:
        masters = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(e)]
        params = e * n * k
        for name, scheme, fn, out_bytes, kw in schemes:
            got, want = fn(masters, scheme, **kw), fn(torch.stack(masters), scheme, **kw)
            check.equal(f"{name} in place {label}", got.data.view(torch.uint8),
                        want.data.view(torch.uint8))
            t = graph_us([lambda: fn(masters, scheme, check_finite=False, **kw)],
                         calls=STEP_CALLS)
            t_stack = graph_us([lambda: fn(torch.stack(masters), scheme, check_finite=False,
                                           **kw)], calls=STEP_CALLS)
            table.add(label, name, t, _pct_copy(params * 2 + out_bytes(params, k), t, peak),
                      t_stack, _fmt(t_stack / t, ".2f"))
        del masters
    return table


def _fp8_weights(scheme, e, n, k):
    """One layer's random experts: FP8 block-quantized, and bf16 [E, K, N] for _grouped_mm."""
    w = torch.randn(e, n, k, device="cuda")
    return fp8_block_quantize(w, scheme), w.bfloat16().transpose(1, 2)


#: (label, M, N, K) of the dense rows at training sizes: the expert shape as a dense GEMM, a
#: large square one, and Qwen3-30B-A3B's attention projections (DENSE_SHAPES' full ones)
DENSE_LARGE_SHAPES = [("", 4096, 1536, 2048), ("", 16384, 1536, 2048), ("", 8192, 8192, 8192),
                      ("qkv", 4096, 5120, 2048), ("qkv", 16384, 5120, 2048),
                      ("o_proj", 4096, 2048, 4096), ("o_proj", 16384, 2048, 4096)]


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
                  ["op", "shape", "fp8 us (act quant included)", "TFLOP/s", "act quant us",
                   "GEMM alone us", "bf16 us", "speedup", "GEMM alone speedup"])

    def add(op, shape, flop, fp8_fn, gemm_fn, bf16_fn, quant_fn):
        rounds = [[graph_us([fn]) for fn in (fp8_fn, gemm_fn, bf16_fn, quant_fn)]
                  for _ in range(FP8_ROUNDS)]
        t8, tg, tb, tq = (statistics.median(column) for column in zip(*rounds))
        table.add(op, shape, t8, flop / t8 / 1e6, tq, tg, tb, _fmt(tb / t8, ".2f"),
                  _fmt(tb / tg, ".2f"))

    for label, m, n, k in DENSE_LARGE_SHAPES:
        shape = " ".join(filter(None, (label, f"{m}x{n}x{k}")))
        w = torch.randn(n, k, device="cuda")
        qw = scheme.quantize_weight(w)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        check.close_norm(f"fp8 dense {shape}", fp8_block_linear(x, qw),
                         scheme.reference_matmul(x, qw))
        wb = w.bfloat16()
        xq, xs = quantize_linear_input(x, qw)
        add("dense scaled_mm", shape, 2 * m * n * k, lambda: fp8_block_linear(x, qw),
            lambda: fp8_block_matmul(xq, xs, qw), lambda: x @ wb.t(),
            lambda: quantize_linear_input(x, qw))
    for label, e, n, k in GROUPED_SHAPES[:4]:
        qw, wb = _fp8_weights(scheme, e, n, k)
        for m in (1024, 4096, 16384):
            counts = route(m, e, TOP_K)
            rows = int(counts.sum())
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            y = fp8_block_grouped_linear(x, qw, counts)
            if m <= 4096:
                check.close_norm(f"fp8 grouped {label} M={m}", y,
                                 scheme.reference_grouped_matmul(x, qw, counts.cpu()))
            kernel = "grouped Gluon WS" if ws_applies(x, qw) else "grouped Triton"
            xq, xs = fp8_quantize_activation(x)
            add(kernel, f"{label} M={m}", 2 * rows * n * k,
                lambda: fp8_block_grouped_linear(x, qw, counts),
                lambda: fp8_block_grouped_matmul(xq, xs, qw, counts),
                lambda: torch._grouped_mm(x, wb, offs=offs), lambda: fp8_quantize_activation(x))
    return [table]


def bench_fp8_swiglu(check):
    """MoE fc2 with the experts' activation before it, in CUDA graphs: torch's SwiGLU then the
    bf16 GEMM, against the FP8 GEMM fed by torch's SwiGLU and the activation quantizer, and
    by the SwiGLU that writes FP8 itself (fp8_quantize_swiglu: same codes, one pass)."""
    scheme = get_scheme("fp8-block")
    table = Table("FP8 SwiGLU + fc2 vs bf16 (CUDA graphs)",
                  ["shape", "M tokens", "bf16: SwiGLU + grouped_mm us",
                   "fp8: SwiGLU + quantizer + GEMM us", "fp8: FP8-writing SwiGLU + GEMM us",
                   "fused / unfused", "fused fp8 / bf16"])
    for label, e, n, k in [s for s in GROUPED_SHAPES[:4] if s[0].startswith("W2")]:
        qw, wb = _fp8_weights(scheme, e, n, k)
        for m in (1024, 4096, 16384):
            counts = route(m, e, TOP_K)
            rows = int(counts.sum())
            h = torch.randn(rows, 2 * k, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(rows, device="cuda")
            offs = torch.cumsum(counts, 0, dtype=torch.int32)
            fused = fp8_quantize_swiglu(h, probs)
            unfused = fp8_quantize_activation(reference_gated_activation(h, probs))
            check.equal(f"fp8 swiglu codes {label} M={m}", fused[0].view(torch.uint8),
                        unfused[0].view(torch.uint8))
            check.equal(f"fp8 swiglu scales {label} M={m}", fused[1], unfused[1])
            t_bf16 = graph_us([lambda: torch._grouped_mm(
                reference_gated_activation(h, probs), wb, offs=offs)])
            t_unfused = graph_us([lambda: fp8_block_grouped_linear(
                reference_gated_activation(h, probs), qw, counts)])
            t_fused = graph_us([lambda: fp8_block_grouped_matmul(
                *fp8_quantize_swiglu(h, probs), qw, counts)])
            table.add(label, str(m), t_bf16, t_unfused, t_fused,
                      _fmt(t_unfused / t_fused, ".2f"), _fmt(t_bf16 / t_fused, ".2f"))
        del qw, wb
    return [table]


def bench_fp8_dispatch(check):
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
                   "before / after", "fp8 before / bf16"])
    for label, e, n, k in [s for s in GROUPED_SHAPES if s[0] in ("W13 E128", "W13 EP8")]:
        qw, wb = _fp8_weights(scheme, e, n, k)
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
            table.add(label, str(m), t_bf16, t_after, t_before,
                      _fmt(t_after / t_before, ".2f"), _fmt(t_bf16 / t_before, ".2f"))
        del qw, wb
    return [table]


def bench_int8(peak, check):
    """INT8 W8A8 against bf16, all in CUDA graphs of STEP_CALLS calls with the weights rotated
    past L2: decode sizes read weights (int8 halves bf16's bytes), training sizes run the int8
    tensor cores. Dense calls: bench_dense. Each case is checked bit for bit against the
    reference first."""
    scheme = get_scheme("int8")
    table = Table(f"INT8 W8A8 GEMM (per-token activations x per-channel weights) vs bf16, "
                  f"CUDA graphs of {STEP_CALLS} calls",
                  ["op", "shape", "M tokens", "int8 us (act quant included)", "%BW", "TFLOP/s",
                   "act quant us", "GEMM alone us", "bf16 us", "speedup",
                   "GEMM alone speedup"])

    def add(op, shape, m, nbytes, flop, qws, wbs, int8_fn, gemm_fn, bf16_fn, x):
        t8 = graph_us([lambda q=q: int8_fn(q) for q in qws], calls=STEP_CALLS)
        tg = graph_us([lambda q=q: gemm_fn(q) for q in qws], calls=STEP_CALLS)
        tb = graph_us([lambda w=w: bf16_fn(w) for w in wbs], calls=STEP_CALLS)
        tq = graph_us([lambda: int8_quantize_activation(x)], calls=STEP_CALLS)
        table.add(op, shape, str(m), t8, _pct_copy(nbytes, t8, peak), flop / t8 / 1e6, tq, tg,
                  tb, _fmt(tb / t8, ".2f"), _fmt(tb / tg, ".2f"))

    def weights(master):
        qws = [scheme.quantize_weight(master + i) for i in range(copies_for(master.numel()))]
        return qws, [(master + i).bfloat16() for i in range(copies_for(2 * master.numel()))]

    for label, e, n, k in GROUPED_SHAPES[:4]:
        qws, wbs = weights(torch.randn(e, n, k, device="cuda"))
        wbs = [w.transpose(1, 2) for w in wbs]
        for m in (8, 64, 256, 4096, 16384):
            counts, rows, touched, x, offs = _batch(m, e, k)
            if m <= 4096:
                check.equal(f"int8 grouped {label} M={m}", int8_grouped_linear(x, qws[0], counts),
                            scheme.reference_grouped_matmul(x, qws[0], counts.cpu()))
            xq, xs = int8_quantize_activation(x)
            add("grouped", label, m, touched * n * (k + 4) + rows * (k + n) * 2,
                2 * rows * n * k, qws, wbs, lambda q: int8_grouped_linear(x, q, counts),
                lambda q: int8_matmul(xq, xs, q, counts),
                lambda w: torch._grouped_mm(x, w, offs=offs), x)
        del qws, wbs
    return [table]


#: Qwen3-30B-A3B's attention projections (--quant-targets experts+attention), and TP2's halves
DENSE_SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
                ("o_proj TP2", 2048, 2048)]


def bench_dense(peak, check):
    """Dense GEMMs of one weight, W4A16 and INT8 against bf16, in CUDA graphs of STEP_CALLS
    calls with the weights rotated past L2. W4A16: the op (one token: w4a16_gemv; in graphs on
    Hopper the Gluon kernel up to DENSE_GLUON_MAX_ROWS tokens), the Triton kernel with its
    tiles and K split (dense_config: eager calls' kernel past one token), and
    --quant-keep-operand's weights (bf16 GEMM from DENSE_KEPT_OPERAND_ROWS tokens). INT8 'one
    slice': the int8 kernel with the same tiles and no K split (split_k.py), which decode sizes
    take by default. FP8 block weights: _fp8_dense_table."""
    w4a16, int8 = get_scheme("w4a16-g128"), get_scheme("int8")
    table = Table(f"Dense GEMMs (attention projections) vs bf16, CUDA graphs of {STEP_CALLS} "
                  f"calls",
                  ["shape", "M tokens", "bf16 us", "bf16 %BW", "W4A16 us", "%BW",
                   "W4A16 Triton kernel us", "W4A16 operand kept us", "W4A16 / bf16",
                   "INT8 us (act quant included)", "INT8 GEMM us", "INT8 GEMM one slice us",
                   "INT8 / bf16"])
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda")
        q4 = [w4a16_quantize(master + i, w4a16) for i in range(copies_for(n * k // 2))]
        q8 = [int8.quantize_weight(master + i) for i in range(copies_for(n * k))]
        wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
        kept = [dataclasses.replace(q, keep_operand=True) for q in q4]  # as many: past L2
        for m in (1, 8, 64, 256, 512, 4096):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            xq, xs = int8_quantize_activation(x)
            triton_tiles = dense_config(m, n, k, 128, x.device)
            tiles8 = int8_dense_tiles(m, n, k, x.device)[:4] + (1,)
            check.close(f"w4a16 dense {label} M={m}", w4a16_linear(x, q4[0]),
                        w4a16.reference_matmul(x, q4[0]))
            if is_hopper(x.device) and m <= DENSE_GLUON_MAX_ROWS:  # what graphs take
                check.close(f"w4a16 dense gluon {label} M={m}", w4a16_dense_gluon(x, q4[0]),
                            w4a16.reference_matmul(x, q4[0]))
            check.equal(f"int8 dense {label} M={m}", int8_linear(x, q8[0]),
                        int8.reference_matmul(x, q8[0]))
            tb, t4, t4triton, t4kept, t8, t8g, t8one = (
                graph_us([lambda w=w: fn(w) for w in weights], calls=STEP_CALLS)
                for fn, weights in (
                    (lambda w: x @ w.t(), wb), (lambda q: w4a16_linear(x, q), q4),
                    (lambda q: w4a16_linear(x, q, triton_tiles), q4),
                    (lambda q: w4a16_linear(x, q), kept),
                    (lambda q: int8_linear(x, q), q8), (lambda q: int8_matmul(xq, xs, q), q8),
                    (lambda q: int8_matmul(xq, xs, q, tiles=tiles8), q8)))
            io = m * (k + n) * 2
            table.add(f"{label} {n}x{k}", str(m), tb, _pct_copy(2 * n * k + io, tb, peak), t4,
                      _pct_copy(n * k // 2 + n * k // 64 + io, t4, peak), t4triton, t4kept,
                      _fmt(tb / t4, ".2f"), t8, t8g, t8one, _fmt(tb / t8, ".2f"))
        del q4, q8, wb, kept
    return [table, _fp8_dense_table(peak, check)]


def _fp8_dense_table(peak, check):
    """FP8 block dense calls at decode sizes: cuBLAS's blockwise scaled_mm (the op's choice on
    SM90 past split_k.NARROW_ROWS tokens where the Triton kernel's decode tiles pass two
    waves) and the Triton kernel (fp8_gemm.dense_tiles), each timed alone on quantized
    inputs."""
    scheme = get_scheme("fp8-block")
    table = Table(f"FP8 block dense GEMMs (attention projections) vs bf16, CUDA graphs of "
                  f"{STEP_CALLS} calls",
                  ["shape", "M tokens", "bf16 us", "FP8 us (act quant included)", "%BW",
                   "act quant us", "scaled_mm alone us", "Triton GEMM alone us", "FP8 / bf16"])
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda")
        qws = [scheme.quantize_weight(master + i) for i in range(copies_for(n * k))]
        wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
        for m in (1, 8, 32, 64, 128, 256):
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            check.close_norm(f"fp8 dense {label} M={m}", fp8_block_linear(x, qws[0]),
                             scheme.reference_matmul(x, qws[0]))
            xq, xs = fp8_quantize_activation(x, pad_rows_to=4)  # scaled_mm's rows
            tq = fp8_quantize_activation(x)
            tb, t8, tquant, tmm, ttriton = (
                graph_us([lambda w=w: fn(w) for w in weights], calls=STEP_CALLS)
                for fn, weights in (
                    (lambda w: x @ w.t(), wb), (lambda q: fp8_block_linear(x, q), qws),
                    (lambda q: quantize_linear_input(x, q), qws[:1]),
                    (lambda q: fp8_block_matmul(xq, xs, q, scaled_mm=True), qws),
                    (lambda q: fp8_block_matmul(*tq, q, scaled_mm=False), qws)))
            table.add(f"{label} {n}x{k}", str(m), tb, t8,
                      _pct_copy(n * k + n * k // 16384 * 4 + m * (k + n) * 2, t8, peak), tquant,
                      tmm, ttriton, _fmt(tb / t8, ".2f"))
        del qws, wb
    return table


#: the experts block's layouts: (label, local experts, experts the tokens are routed over,
#: None for the local ones): E128 is EP = 1; "EP8, TP attention" one rank's 16 of 128 experts
#: for a batch of M tokens (the decode batch); "EP8" DP attention's 16 experts receiving every
#: rank's rows (M / 2 an expert)
BLOCK_LAYOUTS = [("E128", 128, None), ("EP8, TP attention", 16, 128), ("EP8", 16, None)]
#: (label, scheme, whether the fused op gives the composed reference's bits)
BLOCK_SCHEMES = [("W4A16", "w4a16", False), ("FP8", "fp8-block", False), ("INT8", "int8", True)]


def bench_experts(peak, check):
    """A whole MoE experts block without autograd (fc1, SwiGLU with router probs, fc2), as the
    rollout engine runs it (quant.ops.swiglu_experts: each scheme's fused op, from bf16 tokens),
    against bf16 grouped_mm with torch's SwiGLU, in CUDA graphs of STEP_CALLS calls with both
    projections' weights rotated past L2. %BW: the touched experts' weights of both
    projections, tokens in and out, over the copy ceiling. Each op is checked against the
    composed reference first (INT8 bit for bit)."""
    register_cuda_kernels()  # the composed reference's grouped op on CUDA (the CPU one syncs)
    hidden, ffn = 2048, 768
    header = ["experts", "M tokens", "rows an expert", "bf16 us", "bf16 %BW"]
    for name, *_ in BLOCK_SCHEMES:
        header += [f"{name} us", f"{name} %BW", f"bf16 / {name}"]
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
            quantized.append((name, exact, nbytes, [q0] + [
                tuple(scheme.quantize_weight(w + i) for w in masters)
                for i in range(1, copies_for(nbytes))]))
        for m in (8, 64, 128, 256, 4096):
            counts, rows, touched, x, offs = _batch(m, e, hidden, routed=routed)
            probs = torch.rand(rows, device="cuda")
            io = rows * hidden * 4

            def bf16(w1, w2):
                h = reference_gated_activation(torch._grouped_mm(x, w1, offs=offs), probs)
                return torch._grouped_mm(h, w2, offs=offs)

            t_bf16 = graph_us([lambda w=w: bf16(*w) for w in wbs], calls=STEP_CALLS)
            cells = [label, str(m), f"{rows / e:.1f}", t_bf16,
                     _pct_copy(touched * params * 2 // e + io, t_bf16, peak)]
            for name, exact, nbytes, qws in quantized:
                got = swiglu_experts(x, *qws[0], counts, probs)
                want = composed_swiglu_experts(x, *qws[0], counts, probs)
                case = f"{name} experts block {label} M={m}"
                (check.equal if exact else check.close_norm)(case, got, want)
                t = graph_us([lambda q=q: swiglu_experts(x, *q, counts, probs) for q in qws],
                             calls=STEP_CALLS)
                cells += [t, _pct_copy(touched * nbytes // e + io, t, peak),
                          _fmt(t_bf16 / t, ".2f")]
            table.add(*cells)
        del wbs, quantized
    return [table]


def bench_combine(peak, check):
    """The MoE combine (each token's top-8 expert rows summed, hidden 2048, E=128), in CUDA
    graphs: Megatron's unfused combine (scatter_add_ of bf16 atomics; index_add_'s sort under
    torch's deterministic algorithms) against routed_sum, which finds the rows from the
    routing map (its cumsum included) and needs neither."""
    table = Table("MoE combine: Megatron's scatter_add_ vs routed_sum (CUDA graphs)",
                  ["M tokens", "scatter_add_ us", "index_add_ (deterministic) us",
                   "routed_sum us", "%BW", "vs scatter_add_", "vs index_add_"])
    hidden, experts = 2048, 128
    for m in (64, 256, 1024, 4096, 16384):
        scores = torch.rand(m, experts, device="cuda")
        routing_map = torch.zeros(m, experts, dtype=torch.bool, device="cuda").scatter_(
            1, scores.topk(TOP_K, dim=1).indices, True)
        token_of_row = torch.arange(m, device="cuda").expand(experts, m).masked_select(
            routing_map.T.contiguous())  # Megatron's permutation
        rows = torch.randn(m * TOP_K, hidden, device="cuda", dtype=torch.bfloat16)
        check.equal(f"routed_sum M={m}", routed_sum(rows, routing_map, TOP_K),
                    reference_routed_sum(rows, routing_map, TOP_K))
        index = token_of_row[:, None].expand(-1, hidden)
        t_scatter = graph_us([lambda: torch.zeros(m, hidden, dtype=rows.dtype, device="cuda")
                              .scatter_add_(0, index, rows)])
        torch.use_deterministic_algorithms(True)
        try:
            t_index_add = graph_us([lambda: torch.zeros(m, hidden, dtype=rows.dtype,
                                                        device="cuda")
                                    .index_add_(0, token_of_row, rows)])
        finally:
            torch.use_deterministic_algorithms(False)
        t_ours = graph_us([lambda: routed_sum(rows, routing_map, TOP_K)])
        nbytes = (rows.numel() + m * hidden) * rows.element_size()
        table.add(str(m), t_scatter, t_index_add, t_ours, _pct_copy(nbytes, t_ours, peak),
                  _fmt(t_scatter / t_ours, ".2f"), _fmt(t_index_add / t_ours, ".2f"))
    return [table]


def bench_training_swiglu(peak, check):
    """The experts' SwiGLU of a training forward and its backward (Qwen3-30B-A3B, F = 768,
    top-8 routed rows), eagerly as training runs them: torch's composite and its autograd
    against swiglu.py, each backward through autograd.grad of one retained graph (no leaf
    grads accumulated). Checks: the forward's bits, grad_h within a bf16 ulp, grad_probs'
    norm."""
    table = Table("Experts' SwiGLU in training: torch's composite vs swiglu.py (eager)",
                  ["M tokens", "rows", "torch fwd us", "kernel fwd us", "fwd %BW",
                   "torch bwd us", "kernel bwd us", "bwd %BW", "fwd speedup", "bwd speedup"])
    ffn = 768
    for m in (1024, 4096, 16384):
        rows = m * TOP_K
        h = (3 * torch.randn(rows, 2 * ffn, device="cuda")).bfloat16().requires_grad_()
        probs = torch.rand(rows, device="cuda").requires_grad_()
        grad = torch.randn(rows, ffn, device="cuda").bfloat16()
        y_ref, y_ours = reference_gated_activation(h, probs), gated_silu(h, probs)
        check.equal(f"training swiglu forward M={m}", y_ours, y_ref)
        want = torch.autograd.grad(y_ref, (h, probs), grad, retain_graph=True)
        got = torch.autograd.grad(y_ours, (h, probs), grad, retain_graph=True)
        check.close(f"training swiglu grad_h M={m}", got[0], want[0])
        check.close_norm(f"training swiglu grad_probs M={m}", got[1], want[1], 1e-4)
        with torch.no_grad():
            t_ref = median_us([lambda: reference_gated_activation(h, probs)])
            t_ours = median_us([lambda: swiglu_forward(h, probs)])
        t_ref_bwd = median_us([lambda: torch.autograd.grad(y_ref, (h, probs), grad,
                                                           retain_graph=True)])
        t_ours_bwd = median_us([lambda: torch.autograd.grad(y_ours, (h, probs), grad,
                                                            retain_graph=True)])
        table.add(str(m), str(rows), t_ref, t_ours,
                  _pct_copy(6 * rows * ffn + 4 * rows, t_ours, peak), t_ref_bwd, t_ours_bwd,
                  _pct_copy(10 * rows * ffn + 8 * rows, t_ours_bwd, peak),
                  _fmt(t_ref / t_ours, ".2f"), _fmt(t_ref_bwd / t_ours_bwd, ".2f"))
    return [table]


def bench_sampler(peak, check):
    """The rollout sampler's draw over Qwen3's vocabulary, in CUDA graphs (the default CUDA
    generator, which graphs may use): the torch race against race_argmax. The check: with one
    finite score a row, wherever it is, both draw it."""
    table = Table("Sampler draw: the torch race vs race_argmax (V = 151936, CUDA graphs)",
                  ["B rows", "torch race us", "race_argmax us", "%BW", "speedup"])
    vocab = 151936
    for b in (1, 32, 256, 1024):
        only = torch.full((b, vocab), float("-inf"), device="cuda")
        cols = (7919 * torch.arange(b, device="cuda")) % vocab
        only[torch.arange(b, device="cuda"), cols] = 0.0
        check.equal(f"race_argmax B={b}", race_argmax(only, None),
                    reference_race_argmax(only, None))
        scores = torch.randn(b, vocab, device="cuda").log_softmax(-1)
        t_ref = graph_us([lambda: reference_race_argmax(scores, None)])
        t_ours = graph_us([lambda: race_argmax(scores, None)])
        table.add(str(b), t_ref, t_ours, _pct_copy(scores.numel() * 4, t_ours, peak),
                  _fmt(t_ref / t_ours, ".2f"))
    return [table, _bench_sampler_step(peak, check)]


def _bench_sampler_step(peak, check):
    """The whole sampler step from bf16 logits: torch's cast, division and log-softmax, then
    race_argmax and the gather, against sample_with_logprobs's one read. The checks: the same
    tokens as race_argmax on the scaled logits, logprobs within 1e-5 of torch's, and the
    learner's kernel recomputing them bit for bit."""
    table = Table("Sampler step from bf16 logits: log-softmax + race_argmax + gather vs "
                  "sample_with_logprobs (V = 151936, CUDA graphs)",
                  ["B rows", "T", "torch + race_argmax us", "one read us", "%BW", "speedup"])
    vocab = 151936

    def torch_step(logits, temperature):
        scaled = logits.float()
        if temperature != 1.0:
            scaled = scaled / temperature
        logprobs = torch.log_softmax(scaled, dim=-1)
        tokens = race_argmax(logprobs, None)
        return tokens, logprobs.gather(-1, tokens[:, None]).squeeze(-1)

    for b, temperature in ((1, 1.0), (32, 1.0), (256, 1.0), (256, 0.7), (1024, 1.0)):
        logits = (4 * torch.randn(b, vocab, device="cuda")).to(torch.bfloat16)
        name = f"sampler step B={b} T={temperature}"
        seed = torch.cuda.get_rng_state()
        tokens, logprobs = sample_with_logprobs(logits, temperature, None)
        torch.cuda.set_rng_state(seed)
        check.equal(name + " tokens", tokens,
                    race_argmax(logits.float() * inverse_temperature(temperature), None))
        want = torch.log_softmax(logits.float() / temperature, -1).gather(-1, tokens[:, None])
        check.close(name + " logprobs", logprobs, want.squeeze(-1))
        rows = torch.arange(b, device="cuda")
        check.equal(name + " learner", token_logprobs_forward(logits, rows, tokens, temperature,
                                                              False)[0], logprobs)
        t_ref = graph_us([lambda: torch_step(logits, temperature)])
        t_ours = graph_us([lambda: sample_with_logprobs(logits, temperature, None)])
        table.add(str(b), str(temperature), t_ref, t_ours,
                  _pct_copy(logits.numel() * 2, t_ours, peak), _fmt(t_ref / t_ours, ".2f"))
    return table


def _header(peak, floor_us, command):
    props = torch.cuda.get_device_properties(0)
    return (f"GPU {props.name} ({props.multi_processor_count} SMs), torch {torch.__version__}, "
            f"triton {triton.__version__}, Python {platform.python_version()}, "
            f"{datetime.date.today().isoformat()}. Command: `{command}`.\n\n"
            f"Measured ceilings in this run: copy {peak['copy_GBps']:.0f} GB/s (read + write), "
            f"bf16 8192^3 matmul {peak['bf16_TFLOPs']:.0f} TFLOP/s; CUDA-graph launch floor "
            f"(one tiny kernel) {floor_us[0]:.1f} us with one call per graph, "
            f"{floor_us[1]:.1f} us per call with {STEP_CALLS}. %BW = bytes of touched experts + "
            f"activations in and out over the copy ceiling. Times are medians of "
            f"triton.testing.do_bench with weights rotated over copies > 2x L2; the W4A16 "
            f"'graph' columns and tables replay CUDA graphs of {STEP_CALLS} calls (rotating the "
            f"copies), as a decoding engine runs its step (the FP8 tables: one call per graph): "
            f"read decode sizes (M <= {DECODE_MAX_TOKENS}) there, since under ~60 us do_bench "
            f"times the host launch of the Triton wrapper, not the kernel. The W4A16 "
            f"op dequantizes + uses torch._grouped_mm from {DEQUANT_ROWS_PER_EXPERT} "
            f"tokens/expert ({KEPT_OPERAND_ROWS_PER_EXPERT} with the operand kept), the int4 "
            f"kernel below that, and on Hopper the WS kernel from {WS_ROWS_PER_EXPERT.start} "
            f"to {WS_ROWS_PER_EXPERT.stop - 1} tokens/expert without a kept operand; "
            f"'operand kept' is that path with the "
            f"dequantized operand made once per optimizer step (--quant-keep-operand, "
            f"2 B/param of GPU memory) instead of in every call. The backward's grad_input "
            f"takes the WS kernel below {WS_GRAD_ROWS_PER_EXPERT} tokens/expert without a kept "
            f"operand, dequantize + torch._grouped_mm otherwise.\n")


def write_section(path, body, key="qarl_kernels.bench", title="Kernels"):
    """Replace the section `key` of a shared markdown file, keeping the rest."""
    start, end = f"<!-- {key}: start -->", f"<!-- {key}: end -->"
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n\n"
    section = f"{start}\n## {title} (`python -m {key}`)\n\n{body}{end}\n"
    if start in text and end in text:
        text = text[:text.index(start)] + section + text[text.index(end) + len(end) + 1:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


PARTS = ["w4a16", "dense", "quantize", "fp8", "int8", "experts", "training", "combine",
         "sampler"]


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--doc", default="docs/benchmarks.md", help="markdown file to update")
    p.add_argument("--sweep", action="store_true",
                   help="also time quantize block sizes (GEMM tiles: python -m qarl_kernels.tune)")
    p.add_argument("--only", choices=PARTS, action="append")
    p.add_argument("--decode-only", action="store_true",
                   help="only the W4A16 decode tables (M=1..256: the GEMMs, fc1 + SwiGLU "
                        "fused, the GEMMs under skewed routing), into their own doc section")
    p.add_argument("--compare", action="append", default=[], metavar="MODULE",
                   help="with --decode-only: also time MODULE.w4a16_grouped_matmul (an older "
                        "version of the kernel, importable)")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("qarl_kernels.bench needs a CUDA GPU; CPU checks are tests/kernels")
    torch.manual_seed(0)
    check = Checker()
    peak = ceilings()
    floor_us = bench_launch_floor()
    parts = [] if args.decode_only else args.only or PARTS
    tables = (bench_w4a16_decode(peak, check, args.compare) + bench_swiglu(check)
              + bench_w4a16_decode(peak, check, args.compare, DECODE_SKEW)
              if args.decode_only else [])
    if "w4a16" in parts:
        tables += bench_w4a16_grouped(peak, check) + bench_w4a16_grad_input(check)
    if "dense" in parts:
        tables += bench_dense(peak, check)
    if "quantize" in parts:
        tables += bench_quantize(peak, check, args.sweep)
    if "fp8" in parts:
        tables += bench_fp8(peak, check) + bench_fp8_swiglu(check) + bench_fp8_dispatch(check)
    if "int8" in parts:
        tables += bench_int8(peak, check)
    if "experts" in parts:
        tables += bench_experts(peak, check)
    if "training" in parts:
        tables += bench_training_swiglu(peak, check)
    if "combine" in parts:
        tables += bench_combine(peak, check)
    if "sampler" in parts:
        tables += bench_sampler(peak, check)
    command = "python -m qarl_kernels.bench" + "".join(
        f" {a}" for a in (argv if argv is not None else __import__("sys").argv[1:]))
    body = _header(peak, floor_us, command) + "\n" + "\n".join(t.markdown() for t in tables)
    body += f"\nChecked against the reference before timing: {len(check.checked)} cases passed"
    body += "".join(f"\n- MISMATCH {f}" for f in check.failed) + "\n"
    print(body)
    if args.decode_only:
        write_section(args.doc, body, "qarl_kernels.bench --decode-only", "W4A16 decode")
    elif args.only:  # a section of its own: a partial run keeps the full run's tables
        write_section(args.doc, body, "qarl_kernels.bench " + " ".join(
            f"--only {part}" for part in args.only), "Kernels: " + ", ".join(args.only))
    else:
        write_section(args.doc, body)


if __name__ == "__main__":
    main()
