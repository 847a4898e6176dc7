"""Session 37: FP8 dense decode with x quantized inside the Triton GEMM (quantize_x) against
the quantizer + the same GEMM, per tiles x split; bf16 beside. CUDA graphs of 10 calls,
weights rotated past L2. Every fused output is checked equal to the unfused one."""
import itertools
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.fp8_gemm import _launch, dense_tiles
from qarl_kernels.fp8_quantize import fp8_quantize_activation

torch.manual_seed(0)
fp8 = get_scheme("fp8-block")
T = [(16, 32, 4, 4), (16, 64, 4, 4), (16, 128, 4, 4), (16, 128, 8, 4), (32, 64, 4, 4)]
out = open("/tmp/fp8_fused.csv", "w")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=100)
for label, n, k in (("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048), ("o_proj TP2", 2048, 2048)):
    master = torch.randn(n, k, device="cuda")
    qws = [fp8.quantize_weight(master + i) for i in range(copies_for(n * k))]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    for m in (1, 8, 16, 32):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        xq, xs = fp8_quantize_activation(x)
        tb = t([lambda w=w: x @ w.t() for w in wb])
        tq = t([lambda: fp8_quantize_activation(x)])
        rule = dense_tiles(m, n, k, x.device)
        t_rule = t([lambda q=q: _launch(xq, xs, q, xq, 1, True, *rule) for q in qws])
        fused, unfused = [], []
        for tiles, s in itertools.product(T, (1, 2, 4, 8, 16)):
            y0 = _launch(xq, xs, qws[0], xq, 1, True, *tiles, s)
            y1 = _launch(x, x, qws[0], x, 1, True, *tiles, s, quantize_x=True)
            if not torch.equal(y0, y1):
                print("DIFFER", label, m, tiles, s, int((y0 != y1).sum()), flush=True); continue
            uf = t([lambda q=q: _launch(x, x, q, x, 1, True, *tiles, s, quantize_x=True) for q in qws])
            ug = t([lambda q=q: _launch(xq, xs, q, xq, 1, True, *tiles, s) for q in qws])
            fused.append((uf, tiles, s)); unfused.append((ug, tiles, s))
            print(f"{label},{m},{tiles},{s},{uf:.2f},{ug:.2f}", file=out, flush=True)
        bf, bg = min(fused), min(unfused)
        print(f"{label:10s} M={m:3d} bf16 {tb:5.1f} | quant {tq:.1f} + rule GEMM {t_rule:5.1f} {rule} = {tq + t_rule:5.1f}"
              f" | best unfused GEMM {bg[0]:5.1f} {bg[1]} s{bg[2]} | best fused {bf[0]:5.1f} {bf[1]} s{bf[2]}"
              f" -> bf16/fused {tb / bf[0]:.2f}", flush=True)
    del qws, wb
out.close()
