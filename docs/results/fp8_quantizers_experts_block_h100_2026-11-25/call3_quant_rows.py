"""Session 37: the FP8 row quantizers and the FP8 experts block at decode sizes, CUDA graphs of
10 calls (run once with the committed kernels first on PYTHONPATH, once with the new)."""
import sys
import torch
from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.ops import gated_activation
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us, route
from qarl_kernels.fp8_gemm import fp8_swiglu_experts
from qarl_kernels.fp8_quantize import (fp8_quantize_activation, fp8_quantize_packed_rows,
                                       fp8_quantize_swiglu)
import qarl_kernels
print("kernels from", qarl_kernels.__file__, flush=True)
torch.manual_seed(0)
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=300)
out = {}
for rows in (1, 8, 16, 32, 64, 128, 256, 512, 2048):
    x = torch.randn(rows, 2048, device="cuda", dtype=torch.bfloat16)
    h = torch.randn(rows, 1536, device="cuda", dtype=torch.bfloat16)
    p = torch.rand(rows, device="cuda")
    counts = torch.tensor([rows], device="cuda", dtype=torch.int32)
    r = {"activation": t([lambda: fp8_quantize_activation(x)]),
         "packed": t([lambda: fp8_quantize_packed_rows(x)]),
         "swiglu": t([lambda: fp8_quantize_swiglu(h, p)]),
         "swiglu routed half": t([lambda: fp8_quantize_swiglu(h, p, counts=counts // 2, routed_rows=max(1, rows // 2))])}
    q, s = fp8_quantize_swiglu(h, p)
    q2, s2 = fp8_quantize_activation(gated_activation(h, p))
    assert torch.equal(q.view(torch.uint8), q2.view(torch.uint8)) and torch.equal(s, s2)
    print(f"rows {rows:5d} " + " | ".join(f"{k} {v:.2f}" for k, v in r.items()), flush=True)
fp8 = get_scheme("fp8-block")
for label, e, routed in (("E128", 128, None), ("EP8 TP attention", 16, 128)):
    masters = (torch.randn(e, 1536, 2048, device="cuda"), torch.randn(e, 2048, 768, device="cuda"))
    nbytes = sum(w.numel() for w in masters)
    qws = [tuple(fp8.quantize_weight(w + i) for w in masters) for i in range(copies_for(nbytes))]
    for m in (1, 8, 16, 32, 64, 256):
        counts = route(m, routed or e, 8, local=e if routed else None)
        rows = int(counts.sum())
        if rows == 0:
            continue
        x = torch.randn(rows, 2048, device="cuda", dtype=torch.bfloat16)
        probs = torch.rand(rows, device="cuda")
        tok = torch.randn(m, 2048, device="cuda", dtype=torch.bfloat16)
        us = t([lambda q=q: fp8_swiglu_experts(x, *q, counts, probs) for q in qws])
        us_packed = t([lambda: fp8_quantize_packed_rows(tok)])
        print(f"FP8 experts block {label} M={m} rows {rows}: {us:.2f} us; the dispatcher's packed quantizer of {m} tokens {us_packed:.2f} us", flush=True)
    del qws
