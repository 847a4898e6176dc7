"""Session 37: dense INT8 and W4A16 GEMMs at 64-256 tokens (attention's projections), a wider
tile sweep than round 32's: INT8 11 tiles x BLOCK_K 128/256 x split 1/2/4, W4A16 8 tiles x
block_k 128/256 x split 1/2/4; CUDA graphs of 10 calls, weights rotated past L2, bf16 beside.
INT8 outputs must equal the reference's bits; W4A16 must match its rule's output bit for bit
when block_k and split equal, else be close."""
import itertools
import sys
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels import int8_gemm
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_gemm import int8_matmul, int8_tiles
from qarl_kernels.int8_quantize import int8_quantize_activation
from qarl_kernels.w4a16_gemm import W4A16Config, dense_config, w4a16_linear
from qarl_kernels.w4a16_quantize import w4a16_quantize

torch.manual_seed(0)
int8, w4 = get_scheme("int8"), get_scheme("w4a16-g128")
def t(fns): return graph_us(fns, calls=STEP_CALLS, replays=60)
I8 = [(16, 64, 4), (32, 64, 4), (32, 128, 4), (64, 64, 4), (64, 128, 4), (64, 128, 8), (64, 256, 8),
      (128, 64, 4), (128, 128, 4), (128, 128, 8), (128, 256, 8)]
W4 = [(16, 64, 4), (32, 64, 4), (32, 128, 4), (64, 64, 4), (64, 128, 4), (64, 128, 8), (128, 64, 4), (128, 128, 8)]
csv = open("/tmp/dense_sweep.csv", "w")
which = sys.argv[1:] or ["int8", "w4a16"]
for label, n, k in (("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048), ("o_proj TP2", 2048, 2048)):
    master = torch.randn(n, k, device="cuda")
    q8 = [int8.quantize_weight(master + i) for i in range(copies_for(n * k))]
    q4 = [w4a16_quantize(master + i, w4) for i in range(copies_for(n * k // 2))]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    for m in (64, 128, 256):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        tb = t([lambda w=w: x @ w.t() for w in wb])
        line = f"{label:10s} M={m:3d} bf16 {tb:5.1f}"
        if "int8" in which:
            xq, xs = int8_quantize_activation(x)
            want = int8.reference_matmul(x, q8[0])
            rule = int8_tiles(m, True)
            t_rule = t([lambda q=q: int8_matmul(xq, xs, q) for q in q8])
            res = []
            for (bm, bn, wp), bk, s in itertools.product(I8, (128, 256), (1, 2, 4)):
                if bm > 2 * m or k // bk < 2 * s:
                    continue
                int8_gemm._BLOCK_K = bk
                tiles = (bm, bn, wp, 4 if bk == 128 else 3, s)
                try:
                    y = int8_matmul(xq, xs, q8[0], tiles=tiles)
                    if not torch.equal(y, want):
                        print("INT8 DIFFER", label, m, tiles, bk, flush=True); continue
                    us = t([lambda q=q: int8_matmul(xq, xs, q, tiles=tiles) for q in q8])
                except Exception as err:
                    print("INT8 FAIL", label, m, tiles, bk, str(err).splitlines()[0][:120], flush=True); continue
                finally:
                    int8_gemm._BLOCK_K = 128
                res.append((us, tiles, bk)); print(f"int8,{label},{m},{tiles},{bk},{us:.2f}", file=csv, flush=True)
            b = min(res)
            line += f" | INT8 GEMM rule {t_rule:5.1f} {rule} | best {b[0]:5.1f} {b[1]} bk{b[2]} (bf16/best {tb / b[0]:.2f})"
        if "w4a16" in which:
            cfg = dense_config(m, n, k, 128, x.device)
            t_rule = t([lambda q=q: w4a16_linear(x, q, cfg) for q in q4])
            t_op = t([lambda q=q: w4a16_linear(x, q) for q in q4])
            ref = w4.reference_matmul(x, q4[0]).float()
            res = []
            for (bm, bn, wp), bk, s in itertools.product(W4, (128, 256), (1, 2, 4)):
                if bm > 2 * m or k // bk < 2 * s:
                    continue
                c = W4A16Config(block_m=bm, block_n=bn, block_k=bk, split_k=s, num_warps=wp, num_stages=3)
                try:
                    y = w4a16_linear(x, q4[0], c).float()
                    err = float((y - ref).norm() / ref.norm())
                    if err > 1e-2:
                        print("W4A16 WRONG", label, m, c, err, flush=True); continue
                    us = t([lambda q=q: w4a16_linear(x, q, c) for q in q4])
                except Exception as e:
                    print("W4A16 FAIL", label, m, c, str(e).splitlines()[0][:120], flush=True); continue
                res.append((us, (bm, bn, wp, bk, s))); print(f"w4a16,{label},{m},{(bm, bn, wp, bk, s)},{us:.2f}", file=csv, flush=True)
            b = min(res)
            line += f" | W4A16 op {t_op:5.1f}, kernel rule {t_rule:5.1f} ({cfg.block_m},{cfg.block_n},{cfg.block_k},s{cfg.split_k}) | best {b[0]:5.1f} {b[1]} (bf16/best {tb / b[0]:.2f})"
        print(line, flush=True)
    del q8, q4, wb
csv.close()
