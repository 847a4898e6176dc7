"""Session 62, call 2: call 1's prefetch (qarl_kernels, now) against two variants at the token
counts launched with PDL: 'after' (qarl_kernels_after: the prefetch after
griddepcontrol.launch_dependents, before the wait) and 'first' (qarl_kernels_first: only the
first 128-input block of the slice), and the kernels before (qarl_kernels_main, 273ccb4).
Attention's projections and their TP2 halves; CUDA graphs of 10 calls, weights rotated past
L2, interleaved rounds, medians; outputs compared bit for bit. Usage: variants_ab.py ROUNDS
TOKENS..."""
import importlib
import statistics
import sys

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench import DENSE_SHAPES
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us

ROUNDS = int(sys.argv[1])
TOKENS = [int(t) for t in sys.argv[2:]]
PACKAGES = {"before": "qarl_kernels_main", "now": "qarl_kernels", "after": "qarl_kernels_after",
            "first": "qarl_kernels_first"}
OPS = {"FP8": ("fp8-block", "fp8_gemm", "fp8_block_linear"),
       "INT8": ("int8", "int8_gemm", "int8_linear")}


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    for label, n, k in DENSE_SHAPES:
        master = torch.randn(n, k, device="cuda") * 0.02
        wbs = [(master + 1e-3 * i).bfloat16() for i in range(copies_for(2 * n * k))]
        for name, (scheme_name, module, op) in OPS.items():
            ops = {a: getattr(importlib.import_module(f"{p}.{module}"), op)
                   for a, p in PACKAGES.items()}
            scheme = get_scheme(scheme_name)
            qws = [scheme.quantize_weight(master + 1e-3 * i) for i in range(copies_for(n * k))]
            for rows in TOKENS:
                x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                ref = ops["before"](x, qws[0])
                same = all(torch.equal(f(x, qws[0]), ref) for f in ops.values())
                fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs]}
                fns.update({a: [lambda f=f, q=q: f(x, q) for q in qws] for a, f in ops.items()})
                runs = [{a: graph_us(f, calls=STEP_CALLS) for a, f in fns.items()}
                        for _ in range(ROUNDS)]
                med = {a: statistics.median(r[a] for r in runs) for a in fns}
                cells = ", ".join(f"{a} {med[a]:.2f} ({med['before'] / med[a]:.2f}x)"
                                  for a in PACKAGES if a != "before")
                print(f"{name} {label} {rows}x{n}x{k}: bf16 {med['bf16']:.2f} us, before "
                      f"{med['before']:.2f} ({med['bf16'] / med['before']:.2f}x bf16); {cells} "
                      f"[x before's speed]; bits {'equal' if same else 'DIFFER'}", flush=True)


if __name__ == "__main__":
    main()
