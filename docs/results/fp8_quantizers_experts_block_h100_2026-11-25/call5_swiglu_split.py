"""Session 37: W4A16 fc1 + SwiGLU at decode sizes: the fused epilogue (w4a16_grouped_swiglu_op)
against the plain grouped GEMM then the one-pass SwiGLU kernel (swiglu.swiglu_bf16), alone and
in the experts block with fc2; CUDA graphs of 10 calls, weights rotated past L2, 2 routings."""
import statistics
import torch
from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import gated_activation
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.swiglu import swiglu_bf16
from qarl_kernels.w4a16_gemm import w4a16_grouped_linear, w4a16_grouped_swiglu_op
from qarl_kernels.w4a16_quantize import w4a16_quantize

torch.manual_seed(0)
scheme = get_scheme("w4a16")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=100)
LAYOUTS = [("E128", 128, None, 1536), ("EP8 TP attention", 16, 128, 1536), ("EP8 DP", 16, None, 1536), ("TP2", 128, None, 768)]
for label, e, routed, n13 in LAYOUTS:
    masters = (torch.randn(e, n13, 2048, device="cuda"), torch.randn(e, 2048, n13 // 2, device="cuda"))
    nbytes = sum(w.numel() for w in masters) // 2
    qws = [tuple(w4a16_quantize(w + i, scheme) for w in masters) for i in range(copies_for(nbytes))]
    for m in (1, 8, 16, 32, 64, 128, 256):
        res = []
        for seed in (0, 1):
            counts = route(m, routed or e, 8, seed=seed, local=e if routed else None)
            rows = int(counts.sum())
            if rows == 0:
                continue
            x = torch.randn(rows, 2048, device="cuda", dtype=torch.bfloat16)
            probs = torch.rand(rows, device="cuda")
            q1 = qws[0][0]
            fused = w4a16_grouped_swiglu_op(x, q1, counts, probs)
            split = swiglu_bf16(w4a16_grouped_linear(x, q1, counts), probs)
            torch_split = gated_activation(w4a16_grouped_linear(x, q1, counts), probs)
            if not (torch.equal(fused, split) and torch.equal(split, torch_split)):
                print("DIFFER", label, m, seed, int((fused != split).sum()), int((split != torch_split).sum()), flush=True)
            r = {"fc1 plain": t([lambda q=q: w4a16_grouped_linear(x, q[0], counts) for q in qws]),
                 "fc1 fused": t([lambda q=q: w4a16_grouped_swiglu_op(x, q[0], counts, probs) for q in qws]),
                 "fc1 split": t([lambda q=q: swiglu_bf16(w4a16_grouped_linear(x, q[0], counts), probs) for q in qws]),
                 "block fused": t([lambda q=q: w4a16_grouped_linear(w4a16_grouped_swiglu_op(x, q[0], counts, probs), q[1], counts) for q in qws]),
                 "block split": t([lambda q=q: w4a16_grouped_linear(swiglu_bf16(w4a16_grouped_linear(x, q[0], counts), probs), q[1], counts) for q in qws])}
            res.append((rows, r))
        if not res:
            continue
        med = {k: statistics.median(r[k] for _, r in res) for k in res[0][1]}
        print(f"{label:17s} M={m:4d} rows/expert {res[0][0] / e:6.1f} | " + " | ".join(f"{k} {v:6.1f}" for k, v in med.items())
              + f" | block fused/split {med['block fused'] / med['block split']:.2f}", flush=True)
    del qws
