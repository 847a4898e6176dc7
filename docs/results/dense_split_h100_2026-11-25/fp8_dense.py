"""Session 36, call 10: FP8 dense decode: the Triton kernel with K split (tiles x split) against
cuBLAS's blockwise scaled_mm and bf16, CUDA graphs of 10 calls, weights rotated past L2."""
import itertools
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels import split_k
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.fp8_gemm import _launch, fp8_block_linear, fp8_block_matmul, quantize_linear_input
from qarl_kernels.fp8_quantize import fp8_quantize_activation

torch.manual_seed(0)
fp8 = get_scheme("fp8-block")
T = [(16, 32, 4, 4), (16, 64, 4, 4), (32, 64, 4, 4), (16, 128, 4, 4), (64, 128, 4, 4)]
out = open("/tmp/fp8_sweep.csv", "w")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=100)
for label, n, k in (("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048), ("o_proj TP2", 2048, 2048)):
    master = torch.randn(n, k, device="cuda")
    qws = [fp8.quantize_weight(master + i) for i in range(copies_for(n * k))]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    for m in (1, 8, 32, 64, 128, 256):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        ref = fp8.reference_matmul(x, qws[0]).float()
        xq, xs = fp8_quantize_activation(x)
        tb = t([lambda w=w: x @ w.t() for w in wb])
        tcub = t([lambda q=q: fp8_block_linear(x, q) for q in qws])
        tq1 = t([lambda: fp8_quantize_activation(x)])
        tq4 = t([lambda q=q: quantize_linear_input(x, q) for q in qws[:1]])
        res = []
        for tiles, s in itertools.product(T, (1, 2, 4, 8)):
            y = _launch(xq, xs, qws[0], xq, 1, True, *tiles, s).float()
            err = float((y - ref).norm() / ref.norm())
            if err > 1e-2:
                print("WRONG", label, m, tiles, s, err, flush=True); continue
            us = t([lambda q=q: _launch(xq, xs, q, xq, 1, True, *tiles, s) for q in qws])
            res.append((us, tiles[:2], s)); print(f"{label},{m},{tiles[:2]},{s},{us:.2f}", file=out)
        b = min(res)
        print(f"{label:10s} M={m:3d} bf16 {tb:5.1f} | scaled_mm op {tcub:5.1f} (quant pad4 {tq4:.1f}) | quant pad1 {tq1:.1f} + triton best {b[0]:5.1f} {b[1]} s{b[2]} = {tq1 + b[0]:5.1f}", flush=True)
    del qws, wb
out.close()
