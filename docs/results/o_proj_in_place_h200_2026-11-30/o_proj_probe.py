"""Session 58, call 1: o_proj's input as Megatron's attention hands it over. SDPA's flash
kernel writes [B, S, heads, d]; SDPAttention returns the view [S, B, heads x d], so at
micro-batches of B > 1 sequences the rows of S and B do not merge. bf16's matmul (Megatron's
linear) copies it first; the FP8 and INT8 ops reshaped (a copy) and then quantized it, and since
this round quantize it in place (checks.token_rows). At Qwen3-30B-A3B's o_proj (32 heads of 128
-> 2048) and TP2's half, 4096 and 16384 tokens: the layout SDPA gives, the ops before and now
(bitwise compared), bf16 on the view and on a contiguous copy; seven rounds interleaved in CUDA
graphs of one call, medians. Usage: o_proj_probe.py (PYTHONPATH holds qarl_kernels and the old
kernels as qarl_kernels_main)"""
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import qarl_kernels_main.fp8_gemm as fp8_before
import qarl_kernels_main.fp8_quantize as fp8q_before
import qarl_kernels_main.int8_gemm as int8_before
from megatron_qarl.quant import get_scheme
from qarl_kernels.bench_setup import graph_us
from qarl_kernels.fp8_gemm import fp8_block_linear
from qarl_kernels.fp8_quantize import fp8_quantize_activation
from qarl_kernels.int8_gemm import int8_linear
from qarl_kernels.int8_quantize import int8_quantize_activation

ROUNDS = 7
CASES = [  # (label, query heads, kv heads, tokens, sequences)
    ("o_proj", 32, 4, 4096, 8), ("o_proj", 32, 4, 16384, 8), ("o_proj", 32, 4, 4096, 2),
    ("o_proj TP2", 16, 2, 4096, 8), ("o_proj TP2", 16, 2, 16384, 8),
]
HEAD_DIM, HIDDEN = 128, 2048


def attention_output(heads, kv_heads, s, b):
    q = torch.randn(b, heads, s, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, kv_heads, s, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
            for _ in range(2))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    return ctx.permute(2, 0, 1, 3).reshape(s, b, heads * HEAD_DIM)  # SDPAttention's return


def report(label, fns):
    runs = [{name: graph_us([fn]) for name, fn in fns.items()} for _ in range(ROUNDS)]
    med = {name: statistics.median(r[name] for r in runs) for name in fns}
    base = med["bf16 on the view"]
    print(f"{label}: " + ", ".join(f"{name} {t:.1f} us ({base / t:.2f}x)"
                                   for name, t in med.items()), flush=True)
    for name in fns:
        print(f"    {name} by round: " + " ".join(f"{r[name]:.1f}" for r in runs))


def main():
    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    fp8, int8 = get_scheme("fp8-block"), get_scheme("int8")
    for label, heads, kv_heads, tokens, b in CASES:
        s, k = tokens // b, heads * HEAD_DIM
        x = attention_output(heads, kv_heads, s, b)
        xc = x.contiguous()
        print(f"{label} {tokens} tokens = S {s} x B {b}, K {k}: view strides {x.stride()}, "
              f"contiguous {x.is_contiguous()}", flush=True)
        w = torch.randn(HIDDEN, k, device="cuda")
        wb, qf, qi = w.bfloat16(), fp8.quantize_weight(w), int8.quantize_weight(w)
        for name, now, before, qw in [("FP8", fp8_block_linear, fp8_before.fp8_block_linear, qf),
                                      ("INT8", int8_linear, int8_before.int8_linear, qi)]:
            print(f"    {name} now == before (bitwise): {torch.equal(now(x, qw), before(x, qw))}, "
                  f"view == contiguous: {torch.equal(now(x, qw), now(xc, qw))}", flush=True)
        report(f"{label} {tokens} (B {b})", {
            "bf16 on the view": lambda: torch.matmul(x, wb.t()),
            "bf16 contiguous": lambda: torch.matmul(xc, wb.t()),
            "FP8 before": lambda: fp8_before.fp8_block_linear(x, qf),
            "FP8 now": lambda: fp8_block_linear(x, qf),
            "FP8 now, contiguous": lambda: fp8_block_linear(xc, qf),
            "INT8 before": lambda: int8_before.int8_linear(x, qi),
            "INT8 now": lambda: int8_linear(x, qi),
        })
        report(f"    quantizers alone {label} {tokens} (B {b})", {
            "bf16 on the view": lambda: x.reshape(-1, k),  # the copy bf16's matmul makes
            "FP8 before (reshape + quantize)": lambda: fp8q_before.fp8_quantize_activation(
                x.reshape(-1, k), pad_rows_to=4),
            "FP8 in place": lambda: fp8_quantize_activation(x, pad_rows_to=4),
            "FP8 contiguous": lambda: fp8_quantize_activation(xc, pad_rows_to=4),
            "INT8 in place": lambda: int8_quantize_activation(x),
            "INT8 contiguous": lambda: int8_quantize_activation(xc),
        })


if __name__ == "__main__":
    main()
