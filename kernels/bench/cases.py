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


class W4A16Copies:
    """One layer's W4A16 experts as int4 copies, and bf16 [E, K, N] views of them, for timing
    with weights rotated past L2. The copies a call needs count the bytes it reads, its touched
    experts', not the layer's: a call that touches 8 of 128 experts read 1 copy's 12 MiB from L2
    on every call when the layer's size set the count (before 2026-12-02). Copies are made
    as the calls ask for them."""

    def __init__(self, scheme, e, n, k, device="cuda"):
        self.scheme, self.n, self.k = scheme, n, k
        self._master = torch.randn(e, n, k, device=device)
        self._int4, self._bf16 = [], []  # copy i is made from master + i

    def int4(self, touched: int) -> list:
        return self._int4_copies(self._count(expert_bytes(touched, self.n, self.k,
                                                          self.scheme.group_size, 0, True)))

    def bf16(self, touched: int) -> list:
        count = self._count(expert_bytes(touched, self.n, self.k, 1, 0, False))
        return self._grow(self._bf16, count, lambda i: w4a16_dequantize(
            self._int4_copies(i + 1)[i]).transpose(1, 2))

    @staticmethod
    def _count(nbytes: int) -> int:
        return copies_for(nbytes) if nbytes else 1  # a call that reads no expert needs one

    def _int4_copies(self, count: int) -> list:
        return self._grow(self._int4, count,
                          lambda i: w4a16_quantize(self._master + i, self.scheme))

    @staticmethod
    def _grow(copies: list, count: int, make) -> list:
        while len(copies) < count:
            copies.append(make(len(copies)))
        return copies[:count]


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
