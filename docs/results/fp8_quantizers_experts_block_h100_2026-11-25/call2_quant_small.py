"""Session 37: why the FP8 1x128 activation quantizer takes 3.6-3.9 us at 1-8 tokens and 2.0 at
16-32 (CUDA graphs of 10 calls). Variants of the same kernel, launched directly."""
import torch
import triton
from megatron_qarl.quant.fp8_block import BLOCK, FP8_DTYPE
from qarl_kernels import fp8_quantize as fq
from qarl_kernels.bench_setup import STEP_CALLS, graph_us
from qarl_kernels.fp8_quantize import fp8_quantize_activation, fp8_quantize_packed_rows
from qarl_kernels.int8_quantize import int8_quantize_activation, int8_quantize_packed_rows

plain = triton.jit(do_not_specialize=["rows", "rows_out", "K", "stride_xm", "stride_qm",
                                      "stride_sm", "stride_sk"])(fq._fp8_activation_kernel.fn)

def launch(kernel, x, q, s, rows_out, block_rows, warps):
    rows, k = x.shape
    kernel[(triton.cdiv(rows_out, block_rows), triton.cdiv(k, BLOCK))](
        x, q, s, x, 0, rows, rows_out, k, x.stride(0), k, s.stride(1), s.stride(0),
        BLOCK_R=block_rows, BLOCK=BLOCK, E_PAD=1, ROUTED=False, num_warps=warps)

def t(fn): return graph_us([fn], calls=STEP_CALLS, replays=300)

for k in (2048, 4096):
    for m in (1, 2, 4, 8, 16, 32, 64, 256):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        q = torch.empty(max(m, 16), k, device="cuda", dtype=FP8_DTYPE)
        s = torch.empty(k // BLOCK, max(m, 16), device="cuda", dtype=torch.float32)
        ref_q, ref_s = fp8_quantize_activation(x)
        launch(plain, x, q, s, m, 16, 4)
        assert torch.equal(q[:m].view(torch.uint8), ref_q.view(torch.uint8)) and torch.equal(s[:, :m].t(), ref_s)
        row = {"op": t(lambda: fp8_quantize_activation(x)),
               "op pad16": t(lambda: fp8_quantize_activation(x, pad_rows_to=16)),
               "packed": t(lambda: fp8_quantize_packed_rows(x)),
               "int8 op": t(lambda: int8_quantize_activation(x)),
               "int8 packed": t(lambda: int8_quantize_packed_rows(x)),
               "empty x2": t(lambda: (torch.empty(m, k, device="cuda", dtype=FP8_DTYPE), torch.empty(k // BLOCK, m, device="cuda"))),
               "no spec": t(lambda: launch(plain, x, q, s, m, 16, 4)),
               "spec": t(lambda: launch(fq._fp8_activation_kernel, x, q, s, m, 16, 4))}
        for br, w in ((16, 1), (16, 2), (8, 2), (4, 1), (2, 1), (1, 1), (32, 4)):
            if br >= 2 * m and br > 2:
                continue
            row[f"br{br} w{w}"] = t(lambda: launch(plain, x, q, s, m, br, w))
        print(f"K={k} M={m:3d} " + " | ".join(f"{n} {v:.2f}" for n, v in row.items()), flush=True)
