"""FP8Block forward GEMMs on TransformerEngine's blockwise-FP8 cuBLAS GEMM (Hopper), fed OUR
codes and scales: the rollout's e4m3 weights with fp32 128x128 scale_inv, and our 1x128
activation quantization (quant/fp8_block.py). No re-quantization by TE.

Why not TE's quantizer (`Float8BlockQuantizer`, or the `Float8BlockScaling` recipe even with
`force_pow_2_scales=False` / NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1): TE computes
scale = 448/amax, codes = fp8(x * scale), scale_inv = 1/scale (TE's compute_scale_from_amax);
our spec (sgl-kernel's on Hopper) computes scale_inv = amax * fp32(1/448) and codes =
fp8(x * fp32(448 * rcp(amax))) with the GPU's approximate reciprocal. They round
differently, so TE's codes and scales are not the engine's (tests/megatron/test_te_fp8.py finds
such differences). Our tensors are therefore wrapped as `Float8BlockwiseQTensorStorage`
(uint8 data, scale_inv in TE's GEMM-ready layout: te_layout.py) and the GEMM applies our fp32
block scales as they are. The storages carry a `Float8BlockQuantizer` describing our format
(non-power-of-2 scales, 128x128 weights, 1x128 activations) as metadata only: the GEMM converts
its operands without it.

Dense: `general_gemm(weight, activations, layout="TN")`. Grouped: `general_grouped_gemm` over
the experts that have tokens (TE's multi-stream cuBLAS grouped GEMM, the path TE's own
GroupedLinear takes by default). TE 2.18's fused cuBLASLt grouped GEMM (GroupedTensor, opt-in
NVTE_GROUPED_LINEAR_USE_FUSED_GROUPED_GEMM=1) is not used: its activations come from
`tex.group_quantize` (TE's rounding) and its grouped scale layout is not a public contract to
build from our scales.

Scope: SM 9.x only (Blackwell emulates this recipe with MXFP8, which needs power-of-2 scales);
TE >= 2.12 (the calls below were read against TE's v2.12 and v2.18 sources); weights whose dims
are multiples of 128 (others go to the fallback op: Triton or the reference).

NOT RUN: TransformerEngine cannot be installed on any machine here, so the TE calls in this
module have never executed. CI covers what is pure torch: the layout conversion
(te_layout.py), the backend precedence (cuda_ops.py) and why TE's quantizer is not used.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from typing import Callable, Optional

import torch

from ..quant.base import scale_rows
from ..quant.fp8_block import AMAX_EPS, BLOCK
from .te_layout import (
    activation_scale_inv_for_te, padded_group_rows, scatter_rows, weight_scale_inv_for_te,
)

MIN_TE_VERSION = (2, 12)


def _te_version() -> tuple:
    try:
        text = importlib.metadata.version("transformer_engine")
    except importlib.metadata.PackageNotFoundError:
        return (0, 0)
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2])


def te_fp8_unavailable_reason() -> Optional[str]:
    """None when TE's blockwise FP8 GEMM can run our scales here; otherwise why not."""
    if importlib.util.find_spec("transformer_engine") is None:
        return "transformer_engine is not installed"
    if _te_version() < MIN_TE_VERSION:
        return (f"transformer_engine {'.'.join(map(str, _te_version()))} is older than "
                f"{'.'.join(map(str, MIN_TE_VERSION))}")
    if not torch.cuda.is_available():
        return "no CUDA device"
    major, minor = torch.cuda.get_device_capability()
    if major != 9:
        return (f"SM {major}{minor}: TE's blockwise FP8 GEMM takes non-power-of-2 scales on "
                f"Hopper (SM 9.x) only")
    import transformer_engine.pytorch as te

    ok, reason = te.is_fp8_block_scaling_available(return_reason=True)
    return None if ok else reason


def te_applies(qweight) -> bool:
    """Whole 128x128 weight blocks only (ragged edges go to the fallback op)."""
    return qweight.out_features % BLOCK == 0 and qweight.in_features % BLOCK == 0


class TEFP8BlockOps:
    """The FP8Block `linear`/`grouped` ops for ops.register_* when TE is usable.

    fallback_linear/fallback_grouped: the ops for weights TE cannot take; quantize_activation:
    x [T, K] -> (e4m3 [T, K], fp32 [T, ceil(K/128)]), bit-identical to
    quant.fp8_block.quantize_activation (the reference itself, or the Triton kernel)."""

    def __init__(self, fallback_linear: Callable, fallback_grouped: Callable,
                 quantize_activation: Callable):
        import transformer_engine_torch as tex
        from transformer_engine.pytorch.cpp_extensions import general_gemm, general_grouped_gemm
        from transformer_engine.pytorch.tensor import (
            Float8BlockQuantizer, Float8BlockwiseQTensorStorage,
        )

        self._gemm, self._grouped_gemm = general_gemm, general_grouped_gemm
        self._storage = Float8BlockwiseQTensorStorage
        self._e4m3 = tex.DType.kFloat8E4M3
        self._quantizers = {
            dim: Float8BlockQuantizer(self._e4m3, rowwise=True, columnwise=False,
                                      amax_epsilon=AMAX_EPS, force_pow_2_scales=False,
                                      block_scaling_dim=dim)
            for dim in (1, 2)
        }
        self._fallback_linear, self._fallback_grouped = fallback_linear, fallback_grouped
        self._quantize = quantize_activation

    def _tensor(self, data: torch.Tensor, scale_inv: torch.Tensor, block_dim: int):
        """A rowwise TE blockwise tensor over our bytes (1: 1x128 blocks, 2: 128x128)."""
        return self._storage(data.view(torch.uint8), scale_inv, None, None, self._e4m3,
                             self._quantizers[block_dim], block_dim == 2)

    def _activations(self, x2: torch.Tensor, counts: list):
        """Our quantization of x2 [T, K], each group's rows padded to a multiple of 8."""
        q, s = self._quantize(x2)
        padded, index = padded_group_rows(counts, x2.device)
        total = sum(padded)
        return scatter_rows(q, index, total), scatter_rows(s, index, total), padded, index

    def linear(self, x: torch.Tensor, qweight) -> torch.Tensor:
        if not te_applies(qweight):
            return self._fallback_linear(x, qweight)
        x2 = x.reshape(-1, x.shape[-1])
        if x2.shape[0] == 0:
            return x.new_zeros(*x.shape[:-1], qweight.out_features)
        q, s, _, _ = self._activations(x2, [x2.shape[0]])
        weight = self._tensor(qweight.data, weight_scale_inv_for_te(qweight.scale), 2)
        acts = self._tensor(q, activation_scale_inv_for_te(s), 1)
        y = self._gemm(weight, acts, out_dtype=x.dtype, layout="TN",
                       use_split_accumulator=True)[0]
        return y[: x2.shape[0]].reshape(*x.shape[:-1], qweight.out_features)

    def grouped(self, x: torch.Tensor, qweight, tokens_per_expert: torch.Tensor,
                probs: torch.Tensor = None) -> torch.Tensor:
        """probs: the GEMM writes fp32, scaled by them and rounded once here (TE's grouped GEMM
        has no row-scale epilogue)."""
        if not te_applies(qweight):
            return self._fallback_grouped(x, qweight, tokens_per_expert, probs=probs)
        counts = [int(c) for c in tokens_per_expert.tolist()]
        if sum(counts) != x.shape[0]:
            raise ValueError(f"tokens_per_expert sums to {sum(counts)} but x has "
                             f"{x.shape[0]} rows")
        q, s, padded, index = self._activations(x, counts)
        weight_scales = weight_scale_inv_for_te(qweight.scale)  # [E, out/128, pad4(in/128)]
        weights, acts, splits, start = [], [], [], 0
        for e, rows in enumerate(padded):
            if rows:
                weights.append(self._tensor(qweight.data[e], weight_scales[e], 2))
                acts.append(self._tensor(q[start:start + rows],
                                         activation_scale_inv_for_te(s[start:start + rows]), 1))
                splits.append(rows)
            start += rows
        out_dtype = x.dtype if probs is None else torch.float32
        out = x.new_empty(sum(padded), qweight.out_features, dtype=out_dtype)
        if splits:
            self._grouped_gemm(weights, acts, [out], [None] * len(splits), out_dtype,
                               layout="TN", m_splits=splits, single_output=True,
                               use_split_accumulator=True)
        return scale_rows(out[index], probs, x.dtype, qweight.scheme.prob_after_rounding)

    grouped.reads_counts_on_host = True  # m_splits: decode_graph.graph_blocker reads this
