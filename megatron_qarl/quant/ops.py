"""The forward GEMMs and the per-step weight quantizer behind one interface: the schemes'
pure-torch reference everywhere, replaced per (scheme, device type) by a registered kernel
(Triton/TE on CUDA) that reproduces it.

Layers call `linear`/`grouped_linear`/`quantize_weight`; nothing above this module knows which
op ran.
"""
from __future__ import annotations

from typing import Callable, Dict, Tuple

import torch
import torch.nn.functional as F

from .base import QuantizedWeight

LinearOp = Callable[[torch.Tensor, QuantizedWeight], torch.Tensor]
GroupedOp = Callable[[torch.Tensor, QuantizedWeight, torch.Tensor], torch.Tensor]
QuantizeOp = Callable[..., QuantizedWeight]  # (weight, scheme, name) -> QuantizedWeight
# (grad_out, x, qweight, tokens_per_expert) -> (grad_x, grad_w [E, out, in]) of the grouped STE
GroupedBackwardOp = Callable[..., Tuple[torch.Tensor, torch.Tensor]]
# (x, fc1 qweight [E, 2F, in], tokens_per_expert, probs [T]) -> silu(gate) * up * probs [T, F]
GroupedSwigluOp = Callable[..., torch.Tensor]

_LINEAR: Dict[Tuple[str, str], LinearOp] = {}
_GROUPED: Dict[Tuple[str, str], GroupedOp] = {}
_QUANTIZE: Dict[Tuple[str, str], QuantizeOp] = {}
_GROUPED_BACKWARD: Dict[Tuple[str, str], GroupedBackwardOp] = {}
_GROUPED_SWIGLU: Dict[Tuple[str, str], GroupedSwigluOp] = {}


def _key(scheme_type: type, device_type: str) -> Tuple[str, str]:
    return scheme_type.__name__, device_type


def register_linear(scheme_type: type, device_type: str, op: LinearOp) -> None:
    _LINEAR[_key(scheme_type, device_type)] = op


def register_grouped(scheme_type: type, device_type: str, op: GroupedOp) -> None:
    _GROUPED[_key(scheme_type, device_type)] = op


def register_quantize(scheme_type: type, device_type: str, op: QuantizeOp) -> None:
    _QUANTIZE[_key(scheme_type, device_type)] = op


def register_grouped_backward(scheme_type: type, device_type: str, op: GroupedBackwardOp) -> None:
    _GROUPED_BACKWARD[_key(scheme_type, device_type)] = op


def register_grouped_swiglu(scheme_type: type, device_type: str, op: GroupedSwigluOp) -> None:
    _GROUPED_SWIGLU[_key(scheme_type, device_type)] = op


def grouped_backward_op(qweight: QuantizedWeight, device: torch.device):
    """The registered grouped STE backward for this weight and device, or None (reference)."""
    return _GROUPED_BACKWARD.get(_key(type(qweight.scheme), device.type))


def quantize_weight(scheme, weight: torch.Tensor, name: str = "weight") -> QuantizedWeight:
    """scheme.quantize_weight, by a fused kernel where one is registered (bit-identical)."""
    op = _QUANTIZE.get(_key(type(scheme), weight.device.type))
    return op(weight, scheme, name) if op else scheme.quantize_weight(weight, name)


def linear(x: torch.Tensor, qweight: QuantizedWeight) -> torch.Tensor:
    op = _LINEAR.get(_key(type(qweight.scheme), x.device.type))
    return op(x, qweight) if op else qweight.scheme.reference_matmul(x, qweight)


def grouped_linear(x: torch.Tensor, qweight: QuantizedWeight,
                   tokens_per_expert: torch.Tensor) -> torch.Tensor:
    op = _GROUPED.get(_key(type(qweight.scheme), x.device.type))
    if op:
        return op(x, qweight, tokens_per_expert)
    return qweight.scheme.reference_grouped_matmul(x, qweight, tokens_per_expert)


def gated_activation(h: torch.Tensor, probs: torch.Tensor, activation=F.silu) -> torch.Tensor:
    """activation(gate) * up, scaled by each row's router prob, for h = [gate | up]: the MoE
    experts' numerics, which a fused fc1 + SwiGLU kernel reproduces bit for bit."""
    gate, up = torch.chunk(h, 2, dim=-1)
    out = activation(gate) * up
    return (out * probs.unsqueeze(-1)).to(out.dtype)


def grouped_swiglu(x: torch.Tensor, qweight: QuantizedWeight, tokens_per_expert: torch.Tensor,
                   probs: torch.Tensor) -> torch.Tensor:
    """grouped_linear then the SwiGLU of gated_activation, fused where a kernel is registered
    (no autograd: the learner's forward keeps the GEMM's output for its backward)."""
    op = _GROUPED_SWIGLU.get(_key(type(qweight.scheme), x.device.type))
    if op:
        return op(x, qweight, tokens_per_expert, probs)
    return gated_activation(grouped_linear(x, qweight, tokens_per_expert), probs)


def registered_ops() -> dict:
    """Which kernels replace the reference, for logs and benchmarks."""
    return {"linear": sorted(_LINEAR), "grouped": sorted(_GROUPED),
            "quantize": sorted(_QUANTIZE), "grouped_backward": sorted(_GROUPED_BACKWARD),
            "grouped_swiglu": sorted(_GROUPED_SWIGLU)}
