"""FP8 W8A8 with DeepSeek-style block scales: e4m3 weights with one fp32 scale_inv per
128x128 block, activations quantized dynamically per token per 128 inputs.

Ragged edges (dims not multiples of 128) get partial blocks: scale_inv has shape
[ceil(out/128), ceil(in/128)], as SGLang's block-fp8 loader expects.
"""
from __future__ import annotations

import math

import torch

from . import packed_rows
from .base import QuantizedWeight, QuantScheme
from .errors import check_master_weight
from .hopper_reciprocal import hopper_reciprocal

BLOCK = 128
FP8_MAX = 448.0
INV_FP8_MAX = 1.0 / FP8_MAX  # multiply, not divide: see INV_QMAX in w4a16.py
FP8_DTYPE = torch.float8_e4m3fn
AMAX_EPS = 1e-10  # all-zero blocks: a tiny scale instead of a division by zero


def _pad_to_blocks(t: torch.Tensor, dims: tuple) -> torch.Tensor:
    pad = []
    for d in reversed(range(t.dim())):
        pad += [0, (-t.shape[d]) % BLOCK if d in dims else 0]
    return torch.nn.functional.pad(t, pad)


def weight_block_scales(weight: torch.Tensor) -> torch.Tensor:
    """fp32 scale_inv [..., ceil(out/128), ceil(in/128)] = block absmax / 448."""
    nd = weight.dim()
    w = _pad_to_blocks(weight.float().abs(), (nd - 2, nd - 1))
    *lead, o, i = w.shape
    amax = w.reshape(*lead, o // BLOCK, BLOCK, i // BLOCK, BLOCK).amax(dim=(-3, -1))
    return amax.clamp(min=AMAX_EPS) * INV_FP8_MAX


def expand_block_scales(scale_inv: torch.Tensor, shape: tuple) -> torch.Tensor:
    """[..., ob, ib] block scales -> [..., out, in] elementwise."""
    s = scale_inv.repeat_interleave(BLOCK, -2).repeat_interleave(BLOCK, -1)
    return s[..., : shape[-2], : shape[-1]]


def quantize_activation(x: torch.Tensor) -> tuple:
    """Per token, per group of 128 inputs: (e4m3 [..., K], fp32 scales [..., ceil(K/128)]),
    sgl-kernel's arithmetic on Hopper: codes = e4m3(x * activation_multiplier(amax)). The codes
    of a group holding NaN or inf are unspecified (the kernels' amax may drop a NaN)."""
    k = x.shape[-1]
    xp = _pad_to_blocks(x.float(), (x.dim() - 1,))
    groups = xp.reshape(*x.shape[:-1], xp.shape[-1] // BLOCK, BLOCK)  # -1 fails on 0 tokens
    amax = groups.abs().amax(-1).clamp(min=AMAX_EPS)
    q = (groups * activation_multiplier(amax).unsqueeze(-1)).clamp(-FP8_MAX, FP8_MAX)
    return q.to(FP8_DTYPE).reshape(*x.shape[:-1], xp.shape[-1])[..., :k], amax * INV_FP8_MAX


def activation_multiplier(amax: torch.Tensor) -> torch.Tensor:
    """fp32(448 * 1/amax), the reciprocal Hopper's: what sgl-kernel's SM90 quantizer multiplies
    activations by (quant/hopper_reciprocal.py); a token block's scale stays amax * fp32(1/448)."""
    return FP8_MAX * hopper_reciprocal(amax)


def dequantize_activation(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    s = scale.repeat_interleave(BLOCK, -1)[..., : q.shape[-1]]
    return q.float() * s


def packed_row_bytes(hidden: int) -> int:
    """Bytes per token of pack_activation_rows: the codes, then one fp32 scale per 128."""
    return packed_rows.packed_row_bytes(hidden, math.ceil(hidden / BLOCK))


def pack_activation_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """(e4m3 [T, H], fp32 scales [T, ceil(H/128)]) -> uint8 [T, packed_row_bytes(H)], one
    quantized token per row (quant.packed_rows)."""
    return packed_rows.pack_rows(q, scale)


def unpack_activation_rows(packed: torch.Tensor, hidden: int) -> tuple:
    """Views (no copy) of the codes [T, H] and the token-major scales [T, ceil(H/128)]."""
    return packed_rows.unpack_rows(packed, hidden, math.ceil(hidden / BLOCK), FP8_DTYPE, "FP8")


class FP8Block(QuantScheme):
    name = "fp8-block"
    quantizes_activations = True
    scale_block_rows = BLOCK
    weight_operand_dtype = torch.float32  # the GEMM scales in fp32; no bf16 rounding

    def validate_shape(self, name, out_features, in_features):
        """Any shape: ragged edges form partial blocks (TP alignment is checked by the layers)."""

    def quantize_weight(self, weight, name="weight", check_finite=True) -> QuantizedWeight:
        check_master_weight(name, weight, check_finite)
        scale_inv = weight_block_scales(weight)
        q = (weight.float() / expand_block_scales(scale_inv, weight.shape))
        q = q.clamp(-FP8_MAX, FP8_MAX).to(FP8_DTYPE)
        return QuantizedWeight(q, scale_inv, tuple(weight.shape), self)

    def dequantize(self, qweight):
        return qweight.data.float() * expand_block_scales(qweight.scale, qweight.shape)

    def fake_quantize_activation(self, x):
        return dequantize_activation(*quantize_activation(x))

    def serving_tensors(self, prefix, qweight):
        return {f"{prefix}.weight": qweight.data, f"{prefix}.weight_scale_inv": qweight.scale}

    def from_serving_tensors(self, prefix, tensors):
        from .serving import require

        w = require(tensors, f"{prefix}.weight", FP8_DTYPE)
        s = require(tensors, f"{prefix}.weight_scale_inv", torch.float32)
        expected = (math.ceil(w.shape[0] / BLOCK), math.ceil(w.shape[1] / BLOCK))
        if tuple(s.shape) != expected:
            from .errors import QuantizationError

            raise QuantizationError(
                f"{prefix}.weight_scale_inv: shape {tuple(s.shape)}, expected {expected} "
                f"(128x128 blocks of a {tuple(w.shape)} weight); the checkpoint is corrupt "
                f"or uses another weight_block_size"
            )
        return QuantizedWeight(w, s, tuple(w.shape), self)
