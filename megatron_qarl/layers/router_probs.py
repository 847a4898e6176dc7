"""The router probs in the dtype the serving kernel multiplies them in.

SGLang's Triton fused MoE, which serves FP8 block and INT8, multiplies fc2's fp32 accumulator by
fp32 top-k weights (`fused_topk`); Megatron-Core 0.16.1's router rounds its fp32 softmax to the
logits' dtype (`.type_as(logits)`), bf16 in a bf16 model. For experts whose scheme multiplies
the prob into the accumulator (`prob_after_rounding` False) the router takes fp32 logits, an
exact upcast of the gate GEMM's bf16 ones, so the top-k sees the same values and the probs
stay fp32: FP8's fc2 was 2.9e-3 (relative norm) off SGLang's for the rounding alone
(docs/results/router_prob_dtype_cpu_2026-12-01). Marlin (W4A16) rounds the prob to bf16, as
the learner's W4A16 kernels do from either dtype, so its routers are left as they are.
"""
from __future__ import annotations

import types

import torch
from megatron.core.transformer.moe.moe_layer import MoELayer

from .experts import QuantizedGroupedExperts


def keep_router_probs_fp32(model: torch.nn.Module) -> None:
    """A pass over a built model: the routers feeding such experts route on fp32 logits."""
    for module in model.modules():
        if (isinstance(module, MoELayer) and isinstance(module.experts, QuantizedGroupedExperts)
                and not module.experts.scheme.prob_after_rounding):
            _route_on_fp32_logits(module.router)


def _routing_on_fp32_logits(router, logits, *args, **kwargs):
    return type(router).routing(router, logits.float(), *args, **kwargs)


def _route_on_fp32_logits(router) -> None:
    router.routing = types.MethodType(_routing_on_fp32_logits, router)  # survives a deepcopy
