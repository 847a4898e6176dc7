"""Session 36: dense decode GEMMs (attention's projections) with K split in slice order.
Sweeps tiles x split for INT8 and W4A16 against bf16 in CUDA graphs of 10 calls, weights
rotated past L2; checks bits first; stress-checks the split's counters."""
import itertools, sys, time
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels import split_k
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_gemm import int8_matmul, int8_linear, _tiles as int8_rule
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.w4a16_gemm import W4A16Config, w4a16_linear, default_config

torch.manual_seed(0)
SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("o_proj TP2", 2048, 2048)]
MS = [1, 8, 64, 256]
i8, w4 = get_scheme("int8"), get_scheme("w4a16-g128")

def stress():
    w = i8.quantize_weight(torch.randn(2048, 4096, device="cuda"))
    x = torch.randn(8, 4096, device="cuda").bfloat16()
    xq, xs = int8_quantize_activation(x)
    ref = i8.reference_matmul(x, w)
    bad = 0
    for s in (2, 4, 8):
        outs = [int8_matmul(xq, xs, w, tiles=(16, 32, 4, 4, s)) for _ in range(300)]
        torch.cuda.synchronize()
        bad += sum(not torch.equal(o, ref) for o in outs)
    q = w4.quantize_weight(torch.randn(2048, 4096, device="cuda"))
    first = w4a16_linear(x, q, W4A16Config(16, 32, split_k=4))
    for s in (2, 4, 8):
        f = w4a16_linear(x, q, W4A16Config(16, 32, split_k=s))
        outs = [w4a16_linear(x, q, W4A16Config(16, 32, split_k=s)) for _ in range(300)]
        torch.cuda.synchronize()
        bad += sum(not torch.equal(o, f) for o in outs)
    ring = split_k._rings[x.device][0]
    print(f"stress: {bad} differing of 1800 calls; ring counters nonzero: {int((ring != 0).sum())}", flush=True)

stress()
INT8_T = [(16, 32, 4, 4), (16, 64, 4, 4), (32, 32, 4, 4), (64, 64, 4, 4)]
W4_T = [dict(block_m=16, block_n=64), dict(block_m=16, block_n=32), dict(block_m=16, block_n=64, block_k=128),
        dict(block_m=64, block_n=64, block_k=128)]
print("| shape | M | bf16 us | int8 rule us | int8 best us (tiles, split) | w4a16 rule us | w4a16 best us (cfg) |", flush=True)
print("|---|---|---|---|---|---|---|")
for label, n, k in SHAPES:
    master = torch.randn(n, k, device="cuda")
    c8, c4, cb = copies_for(n * k), copies_for(n * k // 2), copies_for(2 * n * k)
    q8 = [i8.quantize_weight(master + i) for i in range(c8)]
    q4 = [w4.quantize_weight(master + i) for i in range(c4)]
    wb = [master.bfloat16() + i for i in range(cb)]
    for m in MS:
        x = torch.randn(m, k, device="cuda").bfloat16()
        xq, xs = int8_quantize_activation(x)
        ref8 = i8.reference_matmul(x, q8[0])
        ref4 = w4.reference_matmul(x, q4[0]).float()
        tb = graph_us([lambda w=w: x @ w.t() for w in wb], calls=STEP_CALLS)
        t8r = graph_us([lambda q=q: int8_matmul(xq, xs, q) for q in q8], calls=STEP_CALLS)
        best8 = None
        for t, s in itertools.product(INT8_T, (1, 2, 4, 8)):
            if not torch.equal(int8_matmul(xq, xs, q8[0], tiles=t + (s,)), ref8):
                print("WRONG int8", label, m, t, s, flush=True); continue
            us = graph_us([lambda q=q: int8_matmul(xq, xs, q, tiles=t + (s,)) for q in q8], calls=STEP_CALLS, replays=100)
            if best8 is None or us < best8[0]: best8 = (us, t, s)
        t4r = graph_us([lambda q=q: w4a16_linear(x, q) for q in q4], calls=STEP_CALLS)
        best4 = None
        for c, s in itertools.product(W4_T, (1, 2, 4, 8)):
            cfg = W4A16Config(split_k=s, **c)
            y = w4a16_linear(x, q4[0], cfg).float()
            if not torch.allclose(y, ref4, rtol=2**-7, atol=1e-2):
                print("WRONG w4a16", label, m, c, s, (y - ref4).abs().max().item(), flush=True); continue
            us = graph_us([lambda q=q: w4a16_linear(x, q, cfg) for q in q4], calls=STEP_CALLS, replays=100)
            if best4 is None or us < best4[0]: best4 = (us, c, s)
        print(f"| {label} {n}x{k} | {m} | {tb:.1f} | {t8r:.1f} | {best8[0]:.1f} {best8[1]} s{best8[2]} | {t4r:.1f} | {best4[0]:.1f} {best4[1]} s{best4[2]} |", flush=True)
    del q8, q4, wb
