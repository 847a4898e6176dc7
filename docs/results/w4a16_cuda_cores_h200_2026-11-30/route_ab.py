"""Session 58, this folder's call 3: the dense op before (3b5b593's kernels, imported as
qarl_kernels_main) and with one token routed to the CUDA-core products (DENSE_CUDA_CORE_ROWS),
beside bf16, at attention's projections and their TP2 halves; 2 tokens as the control (same
route both sides). CUDA graphs of 10 calls, four weight copies rotated, seven interleaved
rounds, medians; outputs compared. Usage: route_ab.py (PYTHONPATH holds both packages)"""
import statistics

import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from qarl_kernels.w4a16_gemm import w4a16_linear
from qarl_kernels_main.w4a16_gemm import w4a16_linear as linear_before

ROUNDS, COPIES = 7, 4
DENSE = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
         ("o_proj TP2", 2048, 2048)]


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    scheme = get_scheme("w4a16")
    for label, n, k in DENSE:
        masters = [torch.randn(n, k, device="cuda") * 0.02 for _ in range(COPIES)]
        wbs, qws = [m.bfloat16() for m in masters], [scheme.quantize_weight(m) for m in masters]
        for rows in (1, 2):
            x = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            now, before = w4a16_linear(x, qws[0]), linear_before(x, qws[0])
            diff = ((now.float() - before.float()).abs().max() / before.float().abs().max()).item()
            fns = {"bf16": [lambda w=w: x @ w.t() for w in wbs],
                   "before": [lambda q=q: linear_before(x, q) for q in qws],
                   "now": [lambda q=q: w4a16_linear(x, q) for q in qws]}
            runs = [{name: graph_us(f, calls=STEP_CALLS) for name, f in fns.items()}
                    for _ in range(ROUNDS)]
            med = {name: statistics.median(r[name] for r in runs) for name in fns}
            print(f"{label} {rows}x{n}x{k}: bf16 {med['bf16']:.2f} us, before {med['before']:.2f} "
                  f"({med['bf16'] / med['before']:.2f}x bf16), now {med['now']:.2f} "
                  f"({med['bf16'] / med['now']:.2f}x bf16): now {med['before'] / med['now']:.2f}x "
                  f"before's speed; max |now - before| / max |before| {diff:.1e}", flush=True)
            print("    before / now by round: " + " ".join(
                f"{r['before'] / r['now']:.2f}" for r in runs), flush=True)


if __name__ == "__main__":
    main()
