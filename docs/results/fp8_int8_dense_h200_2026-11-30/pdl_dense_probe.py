"""Session 60, call 6 of this folder: programmatic dependent launch (kernels/pdl.py) for the FP8
and INT8 dense ops past pdl.PDL_MAX_ROWS (8) tokens, with this round's decode tiles. Arms: now
(no PDL past 8 rows), the activation quantizer with PDL, the GEMM with PDL, both; bf16 beside.
The op quantizer included, CUDA graphs of 10 calls, weights rotated past L2, ROUNDS interleaved
rounds, medians. Usage: pdl_dense_probe.py [ROUNDS TOKENS...]"""
import contextlib
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_gemm, fp8_quantize, int8_gemm, int8_quantize
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
TOKENS = [int(t) for t in sys.argv[2:]] or [16, 32, 64, 128, 256]
SCHEMES = {"FP8": ("fp8-block", fp8_gemm.fp8_block_linear, fp8_quantize, fp8_gemm),
           "INT8": ("int8", int8_gemm.int8_linear, int8_quantize, int8_gemm)}


@contextlib.contextmanager
def pdl_forced(modules):
    saved = [m.pdl_on for m in modules]
    for m in modules:
        m.pdl_on = lambda device, rows=1: True
    try:
        yield
    finally:
        for m, f in zip(modules, saved):
            m.pdl_on = f


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        for name, (scheme_name, op, quantizer, gemm) in SCHEMES.items():
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
            arms = {"now": [], "quantizer": [quantizer], "gemm": [gemm], "both": [quantizer, gemm]}
            for rows in TOKENS:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                ref = op(x, qws[0])
                runs = []
                for _ in range(ROUNDS):
                    r = {"bf16": graph_us([lambda w=w: x @ w.t() for w in wbs], calls=STEP_CALLS)}
                    for arm, modules in arms.items():
                        with pdl_forced(modules):
                            assert torch.equal(op(x, qws[0]), ref)
                            r[arm] = graph_us([lambda q=q: op(x, q) for q in qws],
                                              calls=STEP_CALLS)
                    runs.append(r)
                med = {a: statistics.median(r[a] for r in runs) for a in runs[0]}
                print(f"{name} {label} {rows}x{n}x{k} medians of {ROUNDS}: bf16 {med['bf16']:.2f}"
                      f" us, " + ", ".join(f"{a} {med[a]:.2f} ({med['now'] / med[a]:.2f}x now's "
                                          f"speed, {med['bf16'] / med[a]:.2f}x bf16)"
                                          for a in arms), flush=True)


if __name__ == "__main__":
    main()
