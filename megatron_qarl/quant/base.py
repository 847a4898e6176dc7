"""The interface every quantization scheme implements.

A scheme's pure-torch methods are the specification: Triton kernels, the Megatron layers,
the serving export and the rollout engines must reproduce their numbers.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Optional

import torch


@dataclass
class QuantizedWeight:
    """Low-bit codes and scales of a [..., out, in] weight, in the serving layout.

    Leading dims (e.g. experts) are kept, so one object can hold all local experts.
    """

    data: torch.Tensor
    scale: Optional[torch.Tensor]
    shape: tuple  # logical (..., out, in)
    scheme: "QuantScheme"
    #: let kernels keep the full dequantized GEMM operand in `operand` once they made it: the
    #: learner re-quantizes once per optimizer step (a new object), so every forward and
    #: backward of the step reuses it instead of dequantizing again (memory: the operand)
    keep_operand: bool = False
    #: that memo, [..., out, in] in the operand dtype. Only GEMM kernels read it: publishers
    #: and exporters take data/scale, and indexing an expert leaves it behind
    operand: Optional[torch.Tensor] = field(default=None, init=False, repr=False,
                                            compare=False)
    #: (data._version, codes in the Hopper W4A16 kernel's lane order, their TMA descriptors by
    #: box): that kernel's memo (qarl_kernels.w4a16_lanes), made on its first call, dropped
    #: with the object
    lane_codes: Optional[tuple] = field(default=None, init=False, repr=False, compare=False)

    @property
    def out_features(self) -> int:
        return self.shape[-2]

    @property
    def in_features(self) -> int:
        return self.shape[-1]

    def __getitem__(self, index: int) -> "QuantizedWeight":
        """One expert of a stacked [E, out, in] weight."""
        return QuantizedWeight(
            self.data[index],
            None if self.scale is None else self.scale[index],
            tuple(self.shape[1:]),
            self.scheme,
        )

    def dequantize(self) -> torch.Tensor:
        return self.scheme.dequantize(self)


def scale_rows(acc: torch.Tensor, probs: Optional[torch.Tensor], dtype: torch.dtype,
               after_rounding: bool) -> torch.Tensor:
    """acc [..., rows, out] fp32 as the output dtype, each row times its router prob (fc2 of
    the experts), as the SGLang kernel serving the scheme's MoE applies it: Triton's fused MoE
    (MUL_ROUTED_WEIGHT: FP8, INT8) in the fp32 accumulator before the one rounding; with
    after_rounding Marlin's (W4A16: write_result's `__hmul2`), the rounded output times the
    prob rounded to the output dtype, a product rounded again (what a bf16 multiply in torch
    gives). torch._grouped_mm writes bf16 only, so scheme none takes that form too."""
    if probs is None:
        return acc.to(dtype)
    if after_rounding:
        return acc.to(dtype) * probs.to(dtype).unsqueeze(-1)
    return (acc * probs.float().unsqueeze(-1)).to(dtype)


class QuantScheme(abc.ABC):
    """One low-bit format: weight quantization, activation quantization, reference GEMM."""

    name: str
    #: the dtype of the weight operand the rollout engine's GEMM sees after dequantization
    weight_operand_dtype: torch.dtype = torch.bfloat16
    #: whether activations are quantized too (W8A8 schemes)
    quantizes_activations: bool = False
    #: whether the router prob multiplies a grouped GEMM's rounded output rather than its fp32
    #: accumulator (scale_rows: as the SGLang kernel serving the scheme's MoE does)
    prob_after_rounding: bool = False
    #: output rows one weight scale covers (FP8's 128-row blocks; per-row and per-column-group
    #: scales: 1), the granule a row split or concatenation must keep whole
    scale_block_rows: int = 1

    @abc.abstractmethod
    def validate_shape(self, name: str, out_features: int, in_features: int) -> None:
        """Raise QuantizationError if this layout cannot be quantized."""

    @abc.abstractmethod
    def quantize_weight(self, weight: torch.Tensor, name: str = "weight",
                        check_finite: bool = True) -> QuantizedWeight:
        ...

    @abc.abstractmethod
    def dequantize(self, qweight: QuantizedWeight) -> torch.Tensor:
        """The exact real values the codes stand for, in fp32."""

    def fake_quantize_activation(self, x: torch.Tensor) -> torch.Tensor:
        """x as the low-bit GEMM sees it (identity for weight-only schemes), in fp32."""
        return x.float()

    def reference_matmul(self, x: torch.Tensor, qweight: QuantizedWeight,
                         probs: Optional[torch.Tensor] = None) -> torch.Tensor:
        """y = x @ W^T as the rollout engine's low-bit GEMM computes it (fp32 accumulation);
        probs [rows]: see scale_rows."""
        w = self.dequantize(qweight).to(self.weight_operand_dtype).float()
        y = torch.matmul(self.fake_quantize_activation(x), w.transpose(-1, -2))
        return scale_rows(y, probs, x.dtype, self.prob_after_rounding)

    def reference_grouped_matmul(self, x: torch.Tensor, qweight: QuantizedWeight,
                                 tokens_per_expert: torch.Tensor,
                                 probs: Optional[torch.Tensor] = None) -> torch.Tensor:
        """MoE GEMM over tokens sorted by expert: rows of expert e use qweight[e]. Rows past
        the counts are padding (a fixed-size exchange's, layers/fixed_size_dispatch.py): zeros
        here, left unset by the kernels. probs [T]: each row's router prob (scale_rows)."""
        counts = [int(c) for c in tokens_per_expert.tolist()]
        routed = sum(counts)
        if min(counts, default=0) < 0:
            raise ValueError(f"tokens_per_expert: negative counts {counts}")
        if routed > x.shape[0]:
            raise ValueError(f"tokens_per_expert sums to {routed} but x has {x.shape[0]} rows")
        pe = [None] * len(counts) if probs is None else torch.split(probs[:routed], counts)
        outs = [self.reference_matmul(xe, qweight[e], pe[e])
                for e, xe in enumerate(torch.split(x[:routed], counts))]
        outs.append(x.new_zeros(x.shape[0] - routed, qweight.out_features))
        return torch.cat(outs)

    @abc.abstractmethod
    def serving_tensors(self, prefix: str, qweight: QuantizedWeight) -> dict:
        """The tensors SGLang/vLLM load for the linear `prefix` (an HF module name)."""

    @abc.abstractmethod
    def from_serving_tensors(self, prefix: str, tensors: dict) -> QuantizedWeight:
        ...

    def __repr__(self) -> str:
        return self.name
