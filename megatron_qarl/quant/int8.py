"""INT8 W8A8 (SGLang `w8a8_int8`): per-output-channel int8 weights with fp32 scales,
per-token dynamic int8 activations, int32 accumulation."""
from __future__ import annotations

import torch

from . import packed_rows
from .base import QuantizedWeight, QuantScheme, scale_rows
from .errors import check_master_weight

QMAX = 127.0
AMAX_EPS = 1e-10


def round_half_away(v: torch.Tensor) -> torch.Tensor:
    """Ties away from zero, as CUDA's roundf (libdevice.round, SGLang's quantizer); torch.round
    rounds ties to even. v - trunc(v) is exact, so the tie test is too."""
    whole = v.trunc()
    return torch.where((v - whole).abs() == 0.5, whole + v.sign(), torch.round(v))


def _symmetric_int8(t: torch.Tensor) -> tuple:
    """Over the last dim, SGLang's per_token_quant_int8: amax = max(|t|, 1e-10),
    scale = amax / 127, codes = round_half_away(t * (127 / amax)), all in fp32."""
    amax = t.float().abs().amax(-1, keepdim=True).clamp(min=AMAX_EPS)
    # a 1-element tensor, not a Python scalar: CUDA divides by a scalar as a multiplication by
    # its reciprocal, which rounds differently
    qmax = amax.new_full((1,), QMAX)
    q = round_half_away(t.float() * (qmax / amax)).clamp(-QMAX, QMAX).to(torch.int8)
    return q, amax / qmax


def quantize_activation(x: torch.Tensor) -> tuple:
    """Per token: (int8 [..., K], fp32 scale [..., 1])."""
    return _symmetric_int8(x)


def packed_row_bytes(hidden: int) -> int:
    """Bytes per token of pack_activation_rows: the codes, then the token's fp32 scale."""
    return packed_rows.packed_row_bytes(hidden, 1)


def pack_activation_rows(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """(int8 [T, H], fp32 scales [T, 1]) -> uint8 [T, packed_row_bytes(H)], one quantized
    token per row (quant.packed_rows)."""
    return packed_rows.pack_rows(q, scale)


def unpack_activation_rows(packed: torch.Tensor, hidden: int) -> tuple:
    """Views (no copy) of the codes [T, H] and the scales [T, 1]."""
    return packed_rows.unpack_rows(packed, hidden, 1, torch.int8, "INT8")


def scaled_accumulator(acc: torch.Tensor, x_scale: torch.Tensor,
                       w_scale: torch.Tensor) -> torch.Tensor:
    """The exact int32 sums [..., out] -> fp32 (acc * x_scale) * w_scale: the epilogue of
    SGLang's int8 fused-MoE kernel, one fp32 rounding per step. w_scale: [out, 1]."""
    return acc.float() * x_scale.float() * w_scale.float().transpose(-1, -2)


class Int8W8A8(QuantScheme):
    name = "int8"
    quantizes_activations = True
    weight_operand_dtype = torch.float32

    def validate_shape(self, name, out_features, in_features):
        """Per-channel scales fit any shape."""

    def quantize_weight(self, weight, name="weight", check_finite=True) -> QuantizedWeight:
        check_master_weight(name, weight, check_finite)
        q, scale = _symmetric_int8(weight)
        return QuantizedWeight(q, scale, tuple(weight.shape), self)

    def dequantize(self, qweight):
        return qweight.data.float() * qweight.scale

    def fake_quantize_activation(self, x):
        q, s = quantize_activation(x)
        return q.float() * s

    def reference_matmul(self, x, qweight, probs=None):
        """Exact accumulation of int8 products (fp64 holds every sum below 2^53 exactly and,
        unlike int64, has a matmul on CUDA), then both scales in fp32, then the probs."""
        xq, xs = quantize_activation(x)
        acc = torch.matmul(xq.double(), qweight.data.double().transpose(-1, -2))
        return scale_rows(scaled_accumulator(acc, xs, qweight.scale), probs, x.dtype,
                          self.prob_after_rounding)

    def serving_tensors(self, prefix, qweight):
        return {f"{prefix}.weight": qweight.data, f"{prefix}.weight_scale": qweight.scale}

    def from_serving_tensors(self, prefix, tensors):
        from .serving import require

        w = require(tensors, f"{prefix}.weight", torch.int8)
        s = require(tensors, f"{prefix}.weight_scale", torch.float32)
        if s.numel() != w.shape[0] or s.dim() > 2:
            from .errors import QuantizationError

            raise QuantizationError(
                f"{prefix}.weight_scale: shape {tuple(s.shape)}, expected ({w.shape[0]}, 1) "
                f"(one scale per output row of a {tuple(w.shape)} weight); the checkpoint is "
                f"corrupt or not per-channel INT8")
        return QuantizedWeight(w, s.reshape(-1, 1), tuple(w.shape), self)
