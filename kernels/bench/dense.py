"""Dense GEMMs of attention's projections, 1 to 4096 tokens: W4A16, INT8 and FP8 against bf16."""
import dataclasses

import torch

from megatron_qarl.quant import get_scheme

from ..fp8_gemm import fp8_block_linear, fp8_block_matmul, quantize_linear_input
from ..fp8_quantize import fp8_quantize_activation
from ..int8_gemm import dense_tiles as int8_dense_tiles, int8_linear, int8_matmul
from ..int8_quantize import int8_quantize_activation
from ..w4a16_gemm import dense_config, w4a16_linear
from ..w4a16_quantize import w4a16_quantize
from .cases import DENSE_SHAPES
from .measure import STEP_CALLS, copies_for, graph_output, graph_us
from .report import Table, fmt, pct_copy, rate_header, rates


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
                  ["shape", "M tokens", "bf16 us", "bf16 %BW", "W4A16 us", *rate_header("W4A16"),
                   "W4A16 Triton kernel us", "W4A16 operand kept us", "W4A16 speedup",
                   "INT8 us (act quant included)", *rate_header("INT8"), "INT8 GEMM us",
                   "INT8 GEMM one slice us", "INT8 speedup"])
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
            w4_ref, w8_ref = w4a16.reference_matmul(x, q4[0]), int8.reference_matmul(x, q8[0])
            check.close(f"w4a16 dense {label} M={m}", w4a16_linear(x, q4[0]), w4_ref)
            check.equal(f"int8 dense {label} M={m}", int8_linear(x, q8[0]), w8_ref)
            tb, t4, t4triton, t4kept, t8, t8g, t8one = (
                graph_us_checked(compare, f"{name} graph {label} M={m}", fn, weights, want)
                for name, fn, weights, compare, want in (
                    ("bf16", lambda w: x @ w.t(), wb, None, None),
                    ("w4a16 dense", lambda q: w4a16_linear(x, q), q4, check.close, w4_ref),
                    ("w4a16 dense Triton tiles", lambda q: w4a16_linear(x, q, triton_tiles), q4,
                     check.close, w4_ref),
                    ("w4a16 dense kept", lambda q: w4a16_linear(x, q), kept, check.close,
                     w4_ref),
                    ("int8 dense", lambda q: int8_linear(x, q), q8, check.equal, w8_ref),
                    ("int8 GEMM", lambda q: int8_matmul(xq, xs, q), q8, check.equal, w8_ref),
                    ("int8 GEMM one slice", lambda q: int8_matmul(xq, xs, q, tiles=tiles8), q8,
                     check.equal, w8_ref)))
            io, flops = m * (k + n) * 2, 2 * m * n * k
            table.add(f"{label} {n}x{k}", str(m), tb, pct_copy(2 * n * k + io, tb, peak), t4,
                      *rates(t4, n * k // 2 + n * k // 64 + io, peak, flops), t4triton, t4kept,
                      fmt(tb / t4, ".2f"), t8, *rates(t8, n * k + n * 4 + io, peak, flops), t8g,
                      t8one, fmt(tb / t8, ".2f"))
        del q4, q8, wb, kept
    return [table, _fp8_dense_table(peak, check)]


def graph_us_checked(compare, case, fn, weights, want):
    """graph_us of fn over the rotated weights, after compare (a Checker's method) has checked
    its graph's output on the first against want (none: the bf16 baseline)."""
    if want is not None:
        compare(case, graph_output(lambda: fn(weights[0])), want)
    return graph_us([lambda w=w: fn(w) for w in weights], calls=STEP_CALLS)


def _fp8_dense_table(peak, check):
    """FP8 block dense calls at decode sizes: cuBLAS's blockwise scaled_mm (the op's choice on
    SM90 past split_k.NARROW_ROWS tokens where the Triton kernel's decode tiles pass two
    waves) and the Triton kernel (fp8_gemm.dense_tiles), each timed alone on quantized
    inputs."""
    scheme = get_scheme("fp8-block")
    table = Table(f"FP8 block dense GEMMs (attention projections) vs bf16, CUDA graphs of "
                  f"{STEP_CALLS} calls",
                  ["shape", "M tokens", "bf16 us", "FP8 us (act quant included)",
                   *rate_header("FP8"), "act quant us", "scaled_mm alone us",
                   "Triton GEMM alone us", "FP8 speedup"])
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
            want = scheme.reference_matmul(x, qws[0])
            tb, t8, tmm, ttriton = (
                graph_us_checked(check.close_norm, f"{name} graph {label} M={m}", fn, weights,
                                 want_of)
                for name, fn, weights, want_of in (
                    ("bf16", lambda w: x @ w.t(), wb, None),
                    ("fp8 dense", lambda q: fp8_block_linear(x, q), qws, want),
                    ("fp8 scaled_mm", lambda q: fp8_block_matmul(xq, xs, q, scaled_mm=True)[:m],
                     qws, want),
                    ("fp8 Triton GEMM", lambda q: fp8_block_matmul(*tq, q, scaled_mm=False), qws,
                     want)))
            tquant = graph_us([lambda: quantize_linear_input(x, qws[0])], calls=STEP_CALLS)
            table.add(f"{label} {n}x{k}", str(m), tb, t8,
                      *rates(t8, n * k + n * k // 16384 * 4 + m * (k + n) * 2, peak,
                             2 * m * n * k), tquant, tmm, ttriton, fmt(tb / t8, ".2f"))
        del qws, wb
    return table
