"""Session 59, calls 1-2 of this folder: the FP8 and INT8 decode kernels launched with
programmatic dependent launch (kernels/pdl.py: each lets its successor be scheduled, then waits
for its predecessor) against the same kernels before (qarl_kernels_main: launched without it).
Dense calls at attention's projections and their TP2 halves (1-256 tokens), and the no-grad
experts block (fc1, the SwiGLU writing fc2's input, fc2) at E128 and EP8 beside TP attention
(8-256 tokens); bf16 beside. CUDA graphs of 10 calls, weights rotated past L2, three
interleaved rounds, medians; outputs compared. Usage: pdl_ab.py [ROUNDS TOKENS...] (PYTHONPATH
holds both; call 1: three rounds at 1, 8, 64 and 256 tokens; call 2, with PDL only up to
pdl.PDL_MAX_ROWS rows: seven rounds at 1, 8 and 64 tokens and the experts at 8)"""
import sys
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import BLOCK_LAYOUTS, DENSE_SHAPES, _batch
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels import fp8_gemm, int8_gemm
from qarl_kernels_main import fp8_gemm as fp8_before, int8_gemm as int8_before

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
TOKENS = [int(t) for t in sys.argv[2:]] or [1, 8, 64, 256]
SCHEMES = {"FP8": ("fp8-block", fp8_gemm.fp8_block_linear, fp8_before.fp8_block_linear,
                   fp8_gemm.fp8_swiglu_experts, fp8_before.fp8_swiglu_experts),
           "INT8": ("int8", int8_gemm.int8_linear, int8_before.int8_linear,
                    int8_gemm.int8_swiglu_experts, int8_before.int8_swiglu_experts)}


def medians(fns):
    runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
            for _ in range(ROUNDS)]
    return {name: statistics.median(r[name] for r in runs) for name in fns}


def rel(a, b):
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30)).item()


def dense():
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        for name, (scheme_name, now, before, _, _) in SCHEMES.items():
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
            for rows in TOKENS:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                diff = rel(now(x, qws[0]), before(x, qws[0]))
                med = medians({"bf16": [lambda w=w: x @ w.t() for w in wbs],
                               "before": [lambda q=q: before(x, q) for q in qws],
                               "now": [lambda q=q: now(x, q) for q in qws]})
                print(f"{name} dense {label} {rows}x{n}x{k}: bf16 {med['bf16']:.2f} us, before "
                      f"{med['before']:.2f} ({med['bf16'] / med['before']:.2f}x bf16), now "
                      f"{med['now']:.2f} ({med['bf16'] / med['now']:.2f}x bf16): now "
                      f"{med['before'] / med['now']:.2f}x before's speed; diff {diff:.1e}",
                      flush=True)


def experts():
    hidden, ffn = 2048, 768
    for label, e, routed in BLOCK_LAYOUTS[:2] if len(sys.argv) == 1 else BLOCK_LAYOUTS[1:2]:
        masters = (torch.randn(e, 2 * ffn, hidden, device="cuda"),
                   torch.randn(e, hidden, ffn, device="cuda"))
        nbytes = sum(w.numel() for w in masters)
        for name, (scheme_name, _, _, now, before) in SCHEMES.items():
            scheme = get_scheme(scheme_name)
            qws = [tuple(scheme.quantize_weight(w + i) for w in masters)
                   for i in range(copies_for(nbytes))]
            for m in [t for t in TOKENS if t >= 8][:1 if len(sys.argv) > 1 else 3]:
                counts, rows, _, x, _ = _batch(m, e, hidden, routed=routed)
                probs = torch.rand(rows, device="cuda")
                diff = rel(now(x, *qws[0], counts, probs), before(x, *qws[0], counts, probs))
                med = medians({"before": [lambda q=q: before(x, *q, counts, probs) for q in qws],
                               "now": [lambda q=q: now(x, *q, counts, probs) for q in qws]})
                print(f"{name} experts block {label} M={m}: before {med['before']:.2f} us, now "
                      f"{med['now']:.2f}: now {med['before'] / med['now']:.2f}x before's speed; "
                      f"diff {diff:.1e}", flush=True)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    dense()
    experts()
