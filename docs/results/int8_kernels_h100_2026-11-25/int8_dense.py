"""Session 34: dense INT8 tiles at Qwen3-30B-A3B's attention shapes (qkv 5120x2048, o_proj 2048x4096)."""
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.int8_gemm import int8_matmul, int8_quantize_activation

TILES = [(16, 32, 4, 4), (16, 32, 2, 4), (16, 64, 4, 4), (16, 128, 4, 4), (32, 64, 4, 4),
         (64, 64, 4, 4), (64, 128, 4, 3), (128, 128, 4, 3), (128, 256, 8, 3), (128, 128, 8, 3)]
s = get_scheme("int8")
torch.manual_seed(0)
for n, k in ((5120, 2048), (2048, 4096)):
    master = torch.randn(n, k, device="cuda")
    qws = [s.quantize_weight(master + i) for i in range(copies_for(n * k))]
    wbs = [master.bfloat16()] * copies_for(2 * n * k)
    for m in (1, 8, 64, 256, 1024, 4096, 16384):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        xq, xs = int8_quantize_activation(x)
        tb = graph_us([lambda w=w: x @ w.t() for w in wbs], calls=STEP_CALLS)
        tq = graph_us([lambda: int8_quantize_activation(x)], calls=STEP_CALLS)
        res = []
        want = int8_matmul(xq, xs, qws[0], tiles=TILES[0])
        for t in TILES:
            if not torch.equal(int8_matmul(xq, xs, qws[0], tiles=t), want):
                print("WRONG", t)
            res.append((graph_us([lambda q=q: int8_matmul(xq, xs, q, tiles=t) for q in qws], calls=STEP_CALLS), t))
        if m > 16:
            def int_mm(q):
                acc = torch._int_mm(xq, q.data.t())
                return (acc.float() * xs * q.scale.t()).bfloat16()
            assert torch.equal(int_mm(qws[0]), want)
            res.append((graph_us([lambda q=q: int_mm(q) for q in qws], calls=STEP_CALLS), "int_mm+torch epilogue"))
        res.sort(key=lambda r: r[0])
        print(f"dense {n}x{k} M={m}: bf16 {tb:.1f} quant {tq:.1f}; " + "; ".join(f"{t_} {t:.1f} ({tb / (t + tq):.2f}x)" for t, t_ in res[:5]), flush=True)
