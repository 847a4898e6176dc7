"""Session 36, call 6 probe: the Hopper (Gluon) grouped kernel on a dense weight seen as one
expert, against the dense Triton kernel with its K split, 8-256 tokens (timing + check only)."""
import dataclasses
import torch
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import STEP_CALLS, copies_for, graph_us
from qarl_kernels.w4a16_gemm import w4a16_grouped_matmul, w4a16_linear
from qarl_kernels.w4a16_quantize import w4a16_quantize

torch.manual_seed(0)
w4 = get_scheme("w4a16-g128")
for label, n, k in (("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048), ("o_proj TP2", 2048, 2048)):
    master = torch.randn(n, k, device="cuda")
    q2 = [w4a16_quantize(master + i, w4) for i in range(copies_for(n * k // 2))]
    q3 = [dataclasses.replace(q, data=q.data.unsqueeze(0), scale=q.scale.unsqueeze(0), shape=(1, n, k)) for q in q2]
    wb = [(master + i).bfloat16() for i in range(copies_for(2 * n * k))]
    for m in (8, 32, 64, 128, 256):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        counts = torch.tensor([m], dtype=torch.int32, device="cuda")
        ref = w4.reference_matmul(x, q2[0]).float()
        got = w4a16_grouped_matmul(x, q3[0], counts).float()
        ok = torch.allclose(got, ref, rtol=2**-7, atol=1e-2)
        for q in q3:
            w4a16_grouped_matmul(x, q, counts)  # lane codes outside capture
        tb = graph_us([lambda w=w: x @ w.t() for w in wb], calls=STEP_CALLS)
        td = graph_us([lambda q=q: w4a16_linear(x, q) for q in q2], calls=STEP_CALLS)
        tg = graph_us([lambda q=q: w4a16_grouped_matmul(x, q, counts) for q in q3], calls=STEP_CALLS)
        print(f"{label:10s} M={m:3d} check {ok} | bf16 {tb:5.1f} | dense split/operand {td:5.1f} | gluon E=1 {tg:5.1f} us", flush=True)
    del q2, q3, wb
