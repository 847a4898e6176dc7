"""W4A16: symmetric int4 weights, one bf16 scale per group of inputs, bf16 activations.

Serving format: compressed-tensors "pack-quantized" (shared/reference/formats.md).
Grid: scale = bf16(absmax * fp32(1/7)), q = clamp(round(w / scale), -8, 7). Codes are computed
against the scale AFTER its bf16 rounding, so dequantizing and quantizing again gives the
same codes and scales, and learner and engine see the same weight bit for bit.
"""
from __future__ import annotations

import torch

from .base import QuantizedWeight, QuantScheme
from .errors import QuantizationError, check_divisible, check_master_weight

GROUP_SIZES = (32, 64, 128)
#: the group size is part of the scheme name the user passes: --rollout-quant w4a16-g64
SCHEME_FLAG = "--rollout-quant"
PACK = 8  # int4 codes per int32 word
QMIN, QMAX = -8, 7
# Scales multiply by the fp32 reciprocal rather than divide: CUDA torch turns a division by a
# scalar into exactly this multiplication, so CPU, CUDA and Triton agree bit for bit.
INV_QMAX = 1.0 / 7.0


def pack_int4(codes: torch.Tensor) -> torch.Tensor:
    """int4 codes q in [-8, 7] [..., in] -> int32 [..., in/8]; nibble q+8, low nibble first."""
    nibbles = (codes.to(torch.int64) + 8).reshape(*codes.shape[:-1], -1, PACK)
    shifts = torch.arange(0, 4 * PACK, 4, device=codes.device, dtype=torch.int64)
    words = (nibbles << shifts).sum(-1)
    words = torch.where(words >= 2**31, words - 2**32, words)
    return words.to(torch.int32)


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """int32 [..., in/8] -> int8 codes [..., in] in [-8, 7]."""
    shifts = torch.arange(0, 4 * PACK, 4, device=packed.device, dtype=torch.int32)
    nibbles = (packed.unsqueeze(-1) >> shifts) & 0xF
    return (nibbles - 8).to(torch.int8).reshape(*packed.shape[:-1], -1)


def group_scales(weight: torch.Tensor, group_size: int) -> torch.Tensor:
    """bf16 scale per (row, group): absmax * fp32(1/7), rounded to bf16 (the kernels' product;
    a division rounds otherwise for about 2e-5 of fp32 absmax values)."""
    w = weight.float().reshape(*weight.shape[:-1], -1, group_size)
    return (w.abs().amax(-1) * INV_QMAX).to(torch.bfloat16)


def int4_codes(weight: torch.Tensor, scale: torch.Tensor, group_size: int) -> torch.Tensor:
    """Round-to-nearest-even codes against the already-rounded bf16 scale."""
    w = weight.float().reshape(*weight.shape[:-1], -1, group_size)
    s = scale.float().unsqueeze(-1)
    q = torch.where(s > 0, torch.round(w / torch.where(s > 0, s, 1.0)), 0.0)
    return q.clamp(QMIN, QMAX).to(torch.int8).reshape(weight.shape)


class W4A16(QuantScheme):
    weight_operand_dtype = torch.bfloat16
    #: SGLang serves W4A16 MoE through Marlin, which rounds fc2's output before the prob
    prob_after_rounding = True

    def __init__(self, group_size: int = 128):
        if group_size not in GROUP_SIZES:
            raise QuantizationError(
                f"W4A16 group size {group_size} is not supported; use one of {GROUP_SIZES} "
                f"({SCHEME_FLAG} w4a16-g32, w4a16-g64 or w4a16-g128)"
            )
        self.group_size = group_size
        self.name = f"w4a16-g{group_size}"

    def validate_shape(self, name: str, out_features: int, in_features: int) -> None:
        check_divisible(
            name, "in_features", in_features, self.group_size,
            f"use a W4A16 group size that divides it ({SCHEME_FLAG} w4a16-g64 or w4a16-g32), fewer "
            f"tensor-parallel ranks, or keep this layer unquantized",
        )

    def quantize_weight(self, weight, name="weight", check_finite=True) -> QuantizedWeight:
        check_master_weight(name, weight, check_finite)
        self.validate_shape(name, weight.shape[-2], weight.shape[-1])
        scale = group_scales(weight, self.group_size)
        codes = int4_codes(weight, scale, self.group_size)
        return QuantizedWeight(pack_int4(codes), scale, tuple(weight.shape), self)

    def codes(self, qweight: QuantizedWeight) -> torch.Tensor:
        return unpack_int4(qweight.data)

    def dequantize(self, qweight: QuantizedWeight) -> torch.Tensor:
        q = unpack_int4(qweight.data).float()
        q = q.reshape(*q.shape[:-1], -1, self.group_size)
        return (q * qweight.scale.float().unsqueeze(-1)).reshape(qweight.shape)

    def serving_tensors(self, prefix, qweight):
        if len(qweight.shape) != 2:
            raise QuantizationError(
                f"{prefix}: serving tensors are per linear; index the expert first "
                f"(shape {qweight.shape})"
            )
        return {
            f"{prefix}.weight_packed": qweight.data,
            f"{prefix}.weight_scale": qweight.scale,
            # on the codes' device: a publish bucket flattens its tensors in one torch.cat
            f"{prefix}.weight_shape": torch.tensor(qweight.shape, dtype=torch.int64,
                                                   device=qweight.data.device),
        }

    def from_serving_tensors(self, prefix, tensors):
        from .serving import require

        packed = require(tensors, f"{prefix}.weight_packed", torch.int32)
        scale = require(tensors, f"{prefix}.weight_scale", torch.bfloat16)
        shape = tuple(int(v) for v in require(tensors, f"{prefix}.weight_shape").tolist())
        out, inp = shape
        self.validate_shape(f"{prefix}.weight_shape", out, inp)
        expected = {"weight_packed": (out, inp // PACK),
                    "weight_scale": (out, inp // self.group_size)}
        for key, t in (("weight_packed", packed), ("weight_scale", scale)):
            if tuple(t.shape) != expected[key]:
                raise QuantizationError(
                    f"{prefix}.{key}: shape {tuple(t.shape)}, expected {expected[key]} for "
                    f"weight_shape {shape} with group size {self.group_size}; the checkpoint "
                    f"was written with another group size or is corrupt"
                )
        return QuantizedWeight(packed, scale, shape, self)
