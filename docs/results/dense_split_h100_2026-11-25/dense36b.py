"""Session 36, call 2: every (tiles, split) of the dense decode sweep, against the rules."""
import itertools
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_gemm import int8_matmul, int8_tiles
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.w4a16_gemm import W4A16Config, w4a16_linear, dense_config

torch.manual_seed(0)
SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048), ("o_proj TP2", 2048, 2048)]
i8, w4 = get_scheme("int8"), get_scheme("w4a16-g128")
I8 = [(16, 32, 4, 4), (32, 32, 4, 4), (64, 64, 4, 4)]
W4 = [(16, 64, 128), (16, 32, 256), (32, 64, 128), (64, 64, 128)]
out = open("/tmp/sweep.csv", "w")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=100)
for label, n, k in SHAPES:
    master = torch.randn(n, k, device="cuda")
    q8 = [i8.quantize_weight(master + i) for i in range(copies_for(n * k))]
    q4 = [w4.quantize_weight(master + i) for i in range(copies_for(n * k // 2))]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    for m in (1, 8, 32, 64, 128, 256):
        x = torch.randn(m, k, device="cuda").bfloat16()
        xq, xs = int8_quantize_activation(x)
        tb = t([lambda w=w: x @ w.t() for w in wb])
        r8 = t([lambda q=q: int8_matmul(xq, xs, q) for q in q8])
        r4 = t([lambda q=q: w4a16_linear(x, q) for q in q4])
        res8, res4 = [], []
        for tl_, s in itertools.product(I8, (1, 2, 4, 8)):
            us = t([lambda q=q: int8_matmul(xq, xs, q, tiles=tl_ + (s,)) for q in q8]); res8.append((us, tl_[:2], s))
            print(f"int8,{label},{m},{tl_[:2]},{s},{us:.2f}", file=out)
        for (bm, bn, bk), s in itertools.product(W4, (1, 2, 4, 8)):
            cfg = W4A16Config(block_m=bm, block_n=bn, block_k=bk, split_k=s)
            us = t([lambda q=q: w4a16_linear(x, q, cfg) for q in q4]); res4.append((us, (bm, bn, bk), s))
            print(f"w4a16,{label},{m},{(bm, bn, bk)},{s},{us:.2f}", file=out)
        b8, b4 = min(res8), min(res4)
        rule8 = int8_tiles(m, True); rule4 = dense_config(m, n, k, 128, x.device)
        print(f"{label:10s} M={m:3d} bf16 {tb:5.1f} | int8 rule {r8:5.1f} {rule8[:2]} best {b8[0]:5.1f} {b8[1]} s{b8[2]} "
              f"| w4a16 rule {r4:5.1f} ({rule4.block_m},{rule4.block_n},{rule4.block_k}) s{rule4.split_k} best {b4[0]:5.1f} {b4[1]} s{b4[2]}", flush=True)
    del q8, q4, wb
out.close()
