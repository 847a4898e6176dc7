"""Quantized grouped experts for Megatron's MoELayer: one aligned grouped GEMM per projection
over all local experts, on the cached quantized weights of this rank.

Layout (chosen for Muon and for checkpoints): the module IS a `SequentialMLP` whose
per-expert `ColumnParallelLinear`/`RowParallelLinear` only own the parameters, so each expert
keeps its own 2-D master weights (`local_experts.{i}.linear_fc1.weight` [2*ffn/ETP, hidden]
= [gate_r; up_r], `local_experts.{i}.linear_fc2.weight` [hidden, ffn/ETP]). Muon then
orthogonalises each expert separately, the state dict equals the plain local-spec model's,
and Megatron's own initialisation, TP/EP parameter attributes (`allreduce = not EP>1`,
`partition_dim`, `partition_stride`) and `sharded_state_dict` (global expert keys,
interchangeable with SequentialMLP/TEGroupedMLP checkpoints) apply unchanged. Only `forward`
is ours: the STE takes the experts' 2-D masters as a list (no stacked copy of them in
forward or backward; each expert's grad_weight is written to its own parameter) and the
quantized [E, out, in] stack is cached (keep_operand: with its dequantized bf16 operand, for
the W4A16 kernels; see weight_cache.py).

Scheme 'none' (`build_model(..., grouped_experts=True)`, the trainer's --moe-grouped-gemm):
bf16 experts through the same module, one torch._grouped_mm per projection on a stacked bf16
copy of the masters made once per optimizer step (2 B/param of the experts). The bf16
baseline then runs grouped GEMMs like the quantized models, and its decode steps can be
captured in a CUDA graph: Megatron's SequentialMLP loops over the experts on host-side counts.

The router prob multiplies fc2's output, after the activation (rounded once) and its
quantization, as the SGLang kernel serving the scheme does (quant.base.scale_rows): its Triton
fused MoE (FP8, INT8) in the fp32 accumulator, its Marlin MoE (W4A16) after the output's
rounding, a bf16 product. Megatron scales fc2's input instead: other roundings, other FP8
codes (docs/sglang.md).

Under expert parallelism the token dispatcher does all communication, so the forward is
local. Expert-TP needs no communication here either: fc1 is column-split, fc2 row-split, and
the dispatcher reduces fc2's partial sums.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from megatron.core.transformer.moe.experts import SequentialMLP

from ..quant import QuantScheme, aligned_grouped_linear, ops
from ..quant.ops import gated_activation
from .layout import ETP_FLAG, check_layout, column_layout, row_layout
from .weight_cache import QuantizedWeightCache


class QuantizedGroupedExperts(SequentialMLP):
    """Experts interface: forward(permuted_hidden, tokens_per_expert, permuted_probs)."""

    #: the share of its input rows that routing is expected to fill: under 1 while a
    #: fixed-size token exchange pads them to capacity (fixed_size_dispatch), so the no-grad
    #: kernels choose their tiles for the routed rows, not for the padding
    routed_share = 1.0

    def __init__(self, num_local_experts, config, submodules, scheme: QuantScheme,
                 pg_collection=None, keep_operand: bool = False):
        if config.moe_apply_probs_on_input or config.add_bias_linear:
            raise ValueError(
                "quantized experts support neither --moe-apply-probs-on-input nor expert "
                "biases (--add-bias-linear); Qwen3-MoE uses neither: turn them off"
            )
        if not config.gated_linear_unit:
            raise ValueError("quantized experts implement SwiGLU experts; set "
                             "--swiglu (gated_linear_unit=True)")
        unsupported = {"activation_func_clamp_value": config.activation_func_clamp_value,
                       "glu_linear_offset": config.glu_linear_offset or None,
                       "moe_latent_size": config.moe_latent_size}
        set_options = [name for name, value in unsupported.items() if value is not None]
        if set_options:
            raise ValueError(f"quantized experts compute Megatron's plain SwiGLU experts; "
                             f"unset {', '.join(set_options)} (Qwen3-MoE uses none)")
        super().__init__(num_local_experts, config, submodules, pg_collection=pg_collection)
        self.scheme = scheme
        etp = self.tp_group.size()
        ffn, hidden = self.config.moe_ffn_hidden_size, self.config.hidden_size
        check_layout(scheme, column_layout("experts.linear_fc1", 2 * ffn, hidden, ETP_FLAG, etp,
                                           segment=ffn // etp))
        check_layout(scheme, row_layout("experts.linear_fc2", hidden, ffn, ETP_FLAG, etp))
        self.fc1_cache = QuantizedWeightCache(
            scheme, [e.linear_fc1.weight for e in self.local_experts], "experts.linear_fc1",
            stacked=True, keep_operand=keep_operand)
        self.fc2_cache = QuantizedWeightCache(
            scheme, [e.linear_fc2.weight for e in self.local_experts], "experts.linear_fc2",
            stacked=True, keep_operand=keep_operand)

    def quant_caches(self) -> dict:
        return {"linear_fc1": self.fc1_cache, "linear_fc2": self.fc2_cache}

    def _project(self, x, cache, tokens_per_expert, probs=None):
        return aligned_grouped_linear(x, cache.masters, cache.get(), tokens_per_expert, probs)

    def forward(self, permuted_local_hidden_states, tokens_per_expert, permuted_probs):
        x = permuted_local_hidden_states
        if self.config.activation_func is F.silu and not torch.is_grad_enabled():
            # rollout / old-logprob forwards: the scheme's fused experts where registered
            routed = None if self.routed_share == 1 else max(1, round(x.shape[0]
                                                                        * self.routed_share))
            return ops.swiglu_experts(x, self.fc1_cache.get(), self.fc2_cache.get(),
                                      tokens_per_expert, permuted_probs, routed), None
        h = gated_activation(self._project(x, self.fc1_cache, tokens_per_expert),
                             self.config.activation_func)
        return self._project(h, self.fc2_cache, tokens_per_expert, permuted_probs), None
