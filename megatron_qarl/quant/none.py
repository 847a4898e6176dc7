"""No quantization: the bf16 baseline, so "aligned learner off" is one scheme name away."""
import torch

from .base import QuantizedWeight, QuantScheme
from .errors import check_master_weight


class NoQuant(QuantScheme):
    name = "none"
    #: its grouped GEMM (torch._grouped_mm) writes bf16 only: the prob comes after the rounding
    #: (kernels/grouped_mm.bf16_grouped_linear)
    prob_after_rounding = True

    def validate_shape(self, name, out_features, in_features):
        """Any shape."""

    def quantize_weight(self, weight, name="weight", check_finite=True) -> QuantizedWeight:
        check_master_weight(name, weight, check_finite)
        return QuantizedWeight(weight.detach().to(torch.bfloat16), None, tuple(weight.shape), self)

    def dequantize(self, qweight):
        return qweight.data.float()

    def serving_tensors(self, prefix, qweight):
        return {f"{prefix}.weight": qweight.data}

    def from_serving_tensors(self, prefix, tensors):
        from .serving import require

        w = require(tensors, f"{prefix}.weight", torch.bfloat16)
        return QuantizedWeight(w, None, tuple(w.shape), self)
