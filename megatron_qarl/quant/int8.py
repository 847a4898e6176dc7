"""INT8 W8A8 (SGLang `w8a8_int8`): per-output-channel int8 weights with fp32 scales,
per-token dynamic int8 activations, int32 accumulation."""
from __future__ import annotations

import torch

from .base import QuantizedWeight, QuantScheme
from .errors import check_master_weight

QMAX = 127.0
INV_QMAX = 1.0 / QMAX  # multiply, not divide: see INV_QMAX in w4a16.py
AMAX_EPS = 1e-10


def _symmetric_int8(t: torch.Tensor) -> tuple:
    """Scale = absmax / 127 over the last dim; codes in [-127, 127]."""
    scale = t.float().abs().amax(-1, keepdim=True).clamp(min=AMAX_EPS) * INV_QMAX
    q = torch.round(t.float() / scale).clamp(-QMAX, QMAX).to(torch.int8)
    return q, scale


def quantize_activation(x: torch.Tensor) -> tuple:
    """Per token: (int8 [..., K], fp32 scale [..., 1])."""
    return _symmetric_int8(x)


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

    def reference_matmul(self, x, qweight):
        """Exact accumulation of int8 products (fp64 holds every sum below 2^53 exactly and,
        unlike int64, has a matmul on CUDA), then both scales."""
        xq, xs = quantize_activation(x)
        acc = torch.matmul(xq.double(), qweight.data.double().transpose(-1, -2))
        return (acc * xs.double() * qweight.scale.double().transpose(-1, -2)).to(x.dtype)

    def serving_tensors(self, prefix, qweight):
        return {f"{prefix}.weight": qweight.data, f"{prefix}.weight_scale": qweight.scale}

    def from_serving_tensors(self, prefix, tensors):
        from .serving import require

        w = require(tensors, f"{prefix}.weight", torch.int8)
        s = require(tensors, f"{prefix}.weight_scale", torch.float32)
        return QuantizedWeight(w, s.reshape(-1, 1), tuple(w.shape), self)
