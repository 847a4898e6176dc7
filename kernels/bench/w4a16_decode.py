"""W4A16 decode sizes (`--decode-only`): the grouped GEMM in CUDA graphs beside bf16 and the
int4 stream floor, and fc1 with its SwiGLU fused.
"""
import importlib
import statistics

import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import reference_gated_activation

from ..gluon_hopper import is_hopper
from ..stream_floor import BLOCK_N as FLOOR_ROWS, stream_words
from ..w4a16_gemm import w4a16_grouped_matmul, w4a16_grouped_swiglu
from .cases import (DECODE_SHAPES, DECODE_TOKENS, GROUPED_SHAPES, ROUTED_EXPERTS, W4A16Copies,
                    expert_bytes, routed_batch)
from .measure import STEP_CALLS, copies_for, graph_output, graph_us
from .report import Table, fmt, pct_copy, rate_header, rates


#: the decode table's uneven routing (measure.route): the busiest expert takes about 4x
#: the mean at E128 from 256 tokens on
DECODE_SKEW = 0.5
#: decode rows are medians over this many routing seeds: one routing's tile count can fall
#: just inside a wave or a persistent grid's round and another's just past it (round 13)
DECODE_SEEDS = 4


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
        header += [f"{name} us", *rate_header(name), f"{name} speedup"]
    header += ["this us: range over routings", "1 call/graph: bf16 us", "this us",
               "this speedup"]
    routing = f"skewed routing ({skew})" if skew else "uniform routing"
    table = Table(f"W4A16 decode, {routing}, medians of {DECODE_SEEDS} routings (CUDA graphs of "
                  f"{STEP_CALLS} calls)", header)
    for label, e, n, k in DECODE_SHAPES:
        copies = W4A16Copies(scheme, e, n, k)
        # beside TP attention one token mostly reaches none of the rank's experts: no M=1
        tokens = DECODE_TOKENS[1:] if label in ROUTED_EXPERTS else DECODE_TOKENS
        for m in tokens:
            runs = [_decode_run(scheme, label, (e, n, k), m, skew, seed, copies, kernels, check,
                                peak) for seed in range(DECODE_SEEDS)]
            touched = [r["touched"] for r in runs]
            cells = [label, str(m), f"{min(touched)}-{max(touched)}",
                     f"{max(r['busiest'] for r in runs)} / {runs[0]['rows'] / e:.1f}"]
            cells += [_median(runs, key) for key in ("bf16", "bf16_bw", "floor", "floor_bw")]
            for name, _ in kernels:
                if any(r[name] is None for r in runs):
                    cells += ["failed"] + ["—"] * 5
                    continue
                cells += [_median(runs, name)]
                cells += [statistics.median(column) for column in zip(*(r[f"{name}_rates"]
                                                                        for r in runs))]
                cells += [fmt(statistics.median(r["bf16"] / r[name] for r in runs), ".2f")]
            times = [r["this"] for r in runs]
            spread = "failed" if None in times else f"{min(times):.1f}-{max(times):.1f}"
            single, single_bf16 = _median(runs, "single"), _median(runs, "single_bf16")
            table.add(*cells, spread, single_bf16, single, fmt(single_bf16 / single, ".2f"))
        del copies
    return [table]


def _median(runs, key):
    values = [r[key] for r in runs]
    return None if None in values else statistics.median(values)


def _decode_run(scheme, label, shape, m, skew, seed, copies, kernels, check, peak):
    """One routing of a decode row: times (graphs of STEP_CALLS calls, and of one call) and
    % of copy bandwidth, each kernel checked first against the reference as a graph computes it
    (graph_output)."""
    e, n, k = shape
    counts, rows, touched, x, offs = routed_batch(m, e, k, skew, seed, ROUTED_EXPERTS.get(label))
    qws, bf16_t = copies.int4(touched), copies.bf16(touched)
    bf16_calls = [lambda w=w: torch._grouped_mm(x, w, offs=offs) for w in bf16_t]
    floor = _stream_floor_us(touched, n, k)
    run = {"touched": touched, "busiest": int(counts.max()), "rows": rows,
           "bf16": graph_us(bf16_calls, calls=STEP_CALLS), "floor": floor,
           "floor_bw": None if floor is None else pct_copy(touched * n * k / 2, floor, peak)}
    run["bf16_bw"] = pct_copy(expert_bytes(touched, n, k, 128, rows, False), run["bf16"], peak)
    want = scheme.reference_grouped_matmul(x, qws[0], counts.cpu())
    routing = f"skew {skew} seed {seed}"
    for name, fn in kernels:
        try:
            check.close(f"w4a16 decode {routing} {name} {label} M={m}",
                        graph_output(lambda: fn(x, qws[0], counts)), want)
            t = graph_us([lambda q=q: fn(x, q, counts) for q in qws], calls=STEP_CALLS)
        except Exception as err:  # a version this Triton cannot compile or launch
            print(f"{name} {label} M={m} failed: {str(err).splitlines()[0][:200]}")
            run[name] = None
            continue
        run[name] = t
        run[f"{name}_rates"] = rates(t, expert_bytes(touched, n, k, 128, rows, True), peak,
                                     2 * rows * n * k)
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


def bench_swiglu(peak, check):
    """fc1 (gate+up) with the experts' activation, in CUDA graphs: the int4
    GEMM then torch's SwiGLU (quant.ops.reference_gated_activation), against the fused
    epilogue, whose output must be the same bits in eager calls. In graphs (the Gluon kernel,
    whose tiles may split K) it is checked against the reference by relative norm: a gate or up
    one bf16 step off moves silu(gate) * up by more than an elementwise bf16 tolerance (H200,
    session 68: 0.01% of outputs, 1-4 steps)."""
    scheme = get_scheme("w4a16")
    table = Table(f"W4A16 fc1 + SwiGLU, fused vs unfused (CUDA graphs of "
                  f"{STEP_CALLS} calls)",
                  ["shape", "M tokens", "GEMM then SwiGLU us", "fused us", *rate_header("fused"),
                   "speedup"])
    for label, e, n, k in [s for s in GROUPED_SHAPES if s[0].startswith("W13")]:
        copies = W4A16Copies(scheme, e, n, k)
        for m in DECODE_TOKENS:
            counts, rows, touched, x, _ = routed_batch(m, e, k)
            qws = copies.int4(touched)

            def unfused(q):
                return reference_gated_activation(w4a16_grouped_matmul(x, q, counts))

            check.equal(f"w4a16 fused swiglu {label} M={m}",
                        w4a16_grouped_swiglu(x, qws[0], counts), unfused(qws[0]))
            check.close_norm(f"w4a16 fused swiglu graph {label} M={m}",
                             graph_output(lambda: w4a16_grouped_swiglu(x, qws[0], counts)),
                             reference_gated_activation(
                                 scheme.reference_grouped_matmul(x, qws[0], counts.cpu())))
            t_unfused = graph_us([lambda q=q: unfused(q) for q in qws], calls=STEP_CALLS)
            t_fused = graph_us([lambda q=q: w4a16_grouped_swiglu(x, q, counts)
                                for q in qws], calls=STEP_CALLS)
            fused_bytes = expert_bytes(touched, n, k, 128, rows, True) - rows * n  # y: N / 2
            table.add(label, str(m), t_unfused, t_fused,
                      *rates(t_fused, fused_bytes, peak, 2 * rows * n * k),
                      fmt(t_unfused / t_fused, ".2f"))
        del copies, qws
    return [table]
