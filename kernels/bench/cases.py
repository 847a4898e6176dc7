"""The benchmark's shapes (Qwen3-30B-A3B's experts and attention projections) and the inputs
built for them: routed batches, and weights rotated past L2.
"""
import torch

from ..fp8_quantize import fp8_block_quantize
from ..w4a16_dequantize import w4a16_dequantize
from ..w4a16_quantize import w4a16_quantize
from .measure import DECODE_MAX_TOKENS, copies_for, route


GROUPED_SHAPES = [("W13 E128", 128, 1536, 2048), ("W2 E128", 128, 2048, 768),
                  ("W13 EP8", 16, 1536, 2048), ("W2 EP8", 16, 2048, 768),
                  ("W13 TP2", 128, 768, 2048)]
TOKENS = [1, 8, 64, 256, 1024, 4096, 16384, 65536]
#: EP8 beside TP attention: every rank holds the batch's M tokens, routed top-8 over all 128
#: experts, and multiplies the rows of its 16 (M / 16 per expert). The plain EP8 rows are DP
#: attention's: a rank receives 8M rows, M / 2 per expert (see bench_fp8_dispatch).
EP8_TP_ATTENTION = [("W13 EP8, TP attention", 16, 1536, 2048),
                    ("W2 EP8, TP attention", 16, 2048, 768)]
ROUTED_EXPERTS = dict.fromkeys((label for label, *_ in EP8_TP_ATTENTION), 128)
DECODE_SHAPES = GROUPED_SHAPES + EP8_TP_ATTENTION
DECODE_TOKENS = [1, 8, 64, 128, DECODE_MAX_TOKENS]
TOP_K = 8
#: Qwen3-30B-A3B's attention projections (--quant-targets experts+attention), and TP2's halves
DENSE_SHAPES = [("qkv", 5120, 2048), ("o_proj", 2048, 4096), ("qkv TP2", 2560, 2048),
                ("o_proj TP2", 2048, 2048)]
#: (label, M, N, K) of the dense rows at training sizes: the expert shape as a dense GEMM, a
#: large square one, and Qwen3-30B-A3B's attention projections (DENSE_SHAPES' full ones)
DENSE_LARGE_SHAPES = [("", 4096, 1536, 2048), ("", 16384, 1536, 2048), ("", 8192, 8192, 8192),
                      ("qkv", 4096, 5120, 2048), ("qkv", 16384, 5120, 2048),
                      ("o_proj", 4096, 2048, 4096), ("o_proj", 16384, 2048, 4096)]


def expert_bytes(touched, n, k, group, x_rows, int4):
    w = touched * (n * k // 2 + n * (k // group) * 2) if int4 else touched * n * k * 2
    return w + x_rows * k * 2 + x_rows * n * 2


def w4a16_weights(scheme, e, n, k):
    """Rotated int4 copies of one layer's experts and bf16 [E, K, N] views of as many as the
    bf16 rotation needs."""
    master = torch.randn(e, n, k, device="cuda")
    q0 = w4a16_quantize(master, scheme)
    int4_bytes = q0.data.numel() * 4 + q0.scale.numel() * 2
    qws = [q0] + [w4a16_quantize(master + i, scheme) for i in range(1, copies_for(int4_bytes))]
    bf16_t = [w4a16_dequantize(q).transpose(1, 2) for q in qws[:copies_for(e * n * k * 2)]]
    return qws, bf16_t


def fp8_weights(scheme, e, n, k):
    """One layer's random experts: FP8 block-quantized, and bf16 [E, K, N] for _grouped_mm."""
    w = torch.randn(e, n, k, device="cuda")
    return fp8_block_quantize(w, scheme), w.bfloat16().transpose(1, 2)


def routed_batch(m, e, k, skew=0.0, seed=0, routed=None):
    """counts, rows, experts touched, x, offsets of M tokens routed top-8 over E experts (or
    over `routed` experts, of which these are the first E)."""
    counts = route(m, routed or e, TOP_K, seed=seed, skew=skew, local=e if routed else None)
    x = torch.randn(int(counts.sum()), k, device="cuda", dtype=torch.bfloat16)
    return (counts, int(counts.sum()), int((counts > 0).sum()), x,
            torch.cumsum(counts, 0, dtype=torch.int32))
