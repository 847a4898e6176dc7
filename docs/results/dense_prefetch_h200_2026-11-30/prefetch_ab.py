"""Session 62: the FP8 and INT8 dense decode GEMMs asking L2 for their weight slice before
the PDL wait (split_k.prefetch_slice) against the same kernels before (qarl_kernels_main, 273ccb4:
PDL up to 8 rows, no prefetch). Past pdl.PDL_MAX_ROWS also both packages with PDL up to 256 rows
('+pdl' arms: the module constant patched while each call is captured). Attention's projections
and their TP2 halves; CUDA graphs of 10 calls, weights rotated past L2, interleaved rounds,
medians; outputs compared bit for bit. Usage: prefetch_ab.py ROUNDS TOKENS..."""
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_gemm, int8_gemm, pdl
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels_main import fp8_gemm as fp8_before, int8_gemm as int8_before, pdl as pdl_before

ROUNDS = int(sys.argv[1])
TOKENS = [int(t) for t in sys.argv[2:]]
SCHEMES = {"FP8": ("fp8-block", fp8_gemm.fp8_block_linear, fp8_before.fp8_block_linear),
           "INT8": ("int8", int8_gemm.int8_linear, int8_before.int8_linear)}


def pdl_rows(module, rows, f):
    def call():
        old, module.PDL_MAX_ROWS = module.PDL_MAX_ROWS, rows
        try:
            return f()
        finally:
            module.PDL_MAX_ROWS = old
    return call


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        for name, (scheme_name, now, before) in SCHEMES.items():
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
            for rows in TOKENS:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                arms = {"bf16": lambda w: x @ w.t(), "before": lambda q: before(x, q),
                        "now": lambda q: now(x, q)}
                if rows > pdl.PDL_MAX_ROWS:
                    arms["before+pdl"] = lambda q: pdl_rows(pdl_before, 256, lambda: before(x, q))()
                    arms["now+pdl"] = lambda q: pdl_rows(pdl, 256, lambda: now(x, q))()
                ref = before(x, qws[0])
                same = all(torch.equal(arms[a](qws[0]), ref) for a in arms if a != "bf16")
                fns = {a: [lambda f=f, w=w: f(w) for w in (wbs if a == "bf16" else qws)]
                       for a, f in arms.items()}
                runs = [{a: graph_us(f, calls=STEP_CALLS) for a, f in fns.items()}
                        for _ in range(ROUNDS)]
                med = {a: statistics.median(r[a] for r in runs) for a in fns}
                cells = ", ".join(f"{a} {med[a]:.2f} ({med['before'] / med[a]:.2f}x)"
                                  for a in fns if a not in ("bf16", "before"))
                print(f"{name} {label} {rows}x{n}x{k}: bf16 {med['bf16']:.2f} us, before "
                      f"{med['before']:.2f} ({med['bf16'] / med['before']:.2f}x bf16); {cells} "
                      f"[x before's speed]; bf16/best {med['bf16'] / min(med[a] for a in fns if a != 'bf16'):.2f}; "
                      f"bits {'equal' if same else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
