"""How Megatron's all-to-all token dispatcher feeds our quantized experts.

Three per-instance settings, made by `configure_token_dispatchers` for the MoE layers whose
experts are QuantizedGroupedExperts, and read by methods installed once on the class
(`install_dispatcher_hooks`, idempotent):

- `counts_stay_on_device`: the experts read tokens_per_expert on the GPU (the kernels find
  their rows in-kernel). At EP = TP = 1 nothing else needs host counts (no all-to-all
  splits; compat.megatron_fixes skips the identity chunk sort), so the dispatcher hands over
  the device tensor instead of copying it to the host and waiting: one GPU sync less per
  layer and decode step.
- `token_scheme`: forwards without autograd (rollout, old logprobs) quantize the tokens
  *before* the dispatcher permutes them, where that scheme has a pre-dispatch quantizer
  registered for the tokens' device (quant.ops.dispatch_quantizer). Top-k routing copies
  each token k times, so the activation quantizer of fc1 then runs on 1/k of the rows, and
  the permutation, all-to-all and chunk sort move FP8 or INT8 codes with their scales (about
  half the bytes of bf16 tokens). The quantized tokens travel as one uint8 row each
  (quant.packed_rows): the dispatcher moves rows without looking at them. With autograd on
  the dispatcher moves bf16 tokens, whose gradients its backward returns.
- `routes_per_token`: for dropless top-k routing, the combine and the permutation's backward
  sum each token's rows without atomics (token_combine.py): repeatable bits, less time.

One class-wide change for every dispatcher on CUDA: a dropless top-k permutation, whose count
of rows is known (tokens x k), takes `permute_known_count`, which needs no GPU sync: a CUDA
graph can capture it (the embedded engine's decode step, rollout/embedded/decode_graph.py), and
a training step does not wait on the GPU twice a MoE layer for Megatron's masked_select.
"""
from __future__ import annotations

import torch
from megatron.core.transformer.moe import token_dispatcher
from megatron.core.transformer.moe.moe_layer import MoELayer

from ..quant import ops
from .experts import QuantizedGroupedExperts
from .token_combine import CombineRows, PermutedRows, routes_per_token


def _keep_device_counts(maybe_dtoh_and_synchronize):
    def method(self, point, tokens_per_expert=None):
        if getattr(self, "counts_stay_on_device", False) and self.ep_size == self.tp_size == 1:
            return tokens_per_expert
        return maybe_dtoh_and_synchronize(self, point, tokens_per_expert)

    return method


def _quantizing_dispatch_preprocess(dispatch_preprocess):
    def method(self, hidden_states, routing_map, probs):
        scheme = getattr(self, "token_scheme", None)
        op = None if scheme is None or torch.is_grad_enabled() else ops.dispatch_quantizer(
            scheme, hidden_states.device)
        if op is None:
            return dispatch_preprocess(self, hidden_states, routing_map, probs)
        tokens = hidden_states.reshape(-1, hidden_states.shape[-1])
        out = dispatch_preprocess(self, op(tokens), routing_map, probs)
        # the combine restores the bf16 tokens' shapes, not the packed rows'
        self.hidden_shape = hidden_states.shape
        self.hidden_shape_before_permute = tokens.shape
        return out

    return method


def _summing_dispatch_preprocess(dispatch_preprocess):
    def method(self, hidden_states, routing_map, probs):
        routes = getattr(self, "routes_per_token", None)
        if routes is None or not (torch.is_grad_enabled() and hidden_states.requires_grad):
            return dispatch_preprocess(self, hidden_states, routing_map, probs)
        rows, row_probs = dispatch_preprocess(self, hidden_states.detach(), routing_map, probs)
        tokens = hidden_states.reshape(-1, hidden_states.shape[-1])
        return PermutedRows.apply(tokens, rows, self.routing_map, routes), row_probs

    return method


def _summing_combine_postprocess(combine_postprocess):
    def method(self, rows):
        routes = getattr(self, "routes_per_token", None)
        if routes is None:
            return combine_postprocess(self, rows)
        out = CombineRows.apply(rows, self.routing_map,
                                self.reversed_local_input_permutation_mapping, routes)
        return out.view(self.hidden_shape)

    return method


def _expert_major_order(flat_map: torch.Tensor, count: int) -> torch.Tensor:
    """The first `count` entries of the flattened [experts, tokens] map, routed ones first, in
    Megatron's permutation order (by expert, ascending token within one): a stable sort."""
    return flat_map.to(torch.int8).argsort(descending=True, stable=True)[:count]


def permute_known_count(tokens: torch.Tensor, routing_map: torch.Tensor, probs: torch.Tensor,
                        num_out_tokens: int):
    """Megatron's unfused `permute` (tokens grouped by expert, ascending token order within
    an expert; returns tokens, probs, token index of each row) for a routing map with exactly
    `num_out_tokens` entries. Megatron finds them with masked_select, whose size the host must
    read: a GPU sync, which a CUDA graph cannot capture. With top-k routing and no dropping the
    count is known (tokens x k): nonzero_static of the [experts, tokens] map finds the same
    entries in the same order without one."""
    flat_map = routing_map.T.contiguous().view(-1)
    chosen = torch.nonzero_static(flat_map, size=num_out_tokens).view(-1)
    rows = chosen % routing_map.shape[0]
    return tokens.index_select(0, rows), probs.T.contiguous().view(-1)[chosen], rows


def permute_to_capacity(tokens: torch.Tensor, routing_map: torch.Tensor, probs: torch.Tensor,
                        capacity: int):
    """permute_known_count for a map with at most `capacity` entries, padded to `capacity`
    rows: (tokens, probs). The routed rows come first, in Megatron's order; padding rows carry
    probability 0 and follow every expert's rows, so counts taken from the map, and the
    routed sum of the map, leave them out."""
    flat_map = routing_map.T.contiguous().view(-1)
    chosen = _expert_major_order(flat_map, capacity)
    routed_probs = torch.where(flat_map[chosen], probs.T.contiguous().view(-1)[chosen], 0)
    return tokens.index_select(0, chosen % routing_map.shape[0]), routed_probs


def _takes_known_count(tokens, probs, num_out_tokens, fused: bool, drop_and_pad: bool) -> bool:
    """A dropless permutation on CUDA (Megatron passes the count as a host int only there)."""
    return (tokens.is_cuda and not (fused or drop_and_pad) and probs is not None
            and isinstance(num_out_tokens, int))


def _sync_free_permute(permute):
    def method(tokens, routing_map, probs=None, num_out_tokens=None, fused=False,
               drop_and_pad=False):
        if _takes_known_count(tokens, probs, num_out_tokens, fused, drop_and_pad):
            return permute_known_count(tokens, routing_map, probs, num_out_tokens)
        return permute(tokens, routing_map, probs=probs, num_out_tokens=num_out_tokens,
                       fused=fused, drop_and_pad=drop_and_pad)

    return method


def _install(owner, name: str, wrap) -> None:
    """owner.name = wrap(owner.name), unless that wrapper is already in the chain: each installed
    method lists the wrappers it holds, so later wrappers keep the earlier ones' marks
    (install_dispatcher_hooks runs once per model built)."""
    method = getattr(owner, name)
    held = getattr(method, "qarl_wrappers", frozenset())
    if wrap.__name__ not in held:
        wrapped = wrap(method)
        wrapped.qarl_wrappers = held | {wrap.__name__}
        setattr(owner, name, wrapped)


def install_dispatcher_hooks() -> None:
    _install(token_dispatcher, "permute", _sync_free_permute)
    dispatcher = token_dispatcher.MoEAlltoAllTokenDispatcher
    for name, wrap in (("_maybe_dtoh_and_synchronize", _keep_device_counts),
                       ("dispatch_preprocess", _quantizing_dispatch_preprocess),
                       ("dispatch_preprocess", _summing_dispatch_preprocess),
                       ("combine_postprocess", _summing_combine_postprocess)):
        _install(dispatcher, name, wrap)


def configure_token_dispatchers(model: torch.nn.Module) -> None:
    """Mark the all-to-all dispatchers that feed QuantizedGroupedExperts (see the module
    docstring). Token quantization before dispatch and the routed sums need Megatron's unfused
    permutation (TE's fused permute takes float tokens) and no shared experts (they read the
    dispatcher's input)."""
    install_dispatcher_hooks()
    for module in model.modules():
        if not (isinstance(module, MoELayer)
                and isinstance(module.experts, QuantizedGroupedExperts)):
            continue
        dispatcher = module.token_dispatcher
        dispatcher.counts_stay_on_device = True
        if not (isinstance(dispatcher, token_dispatcher.MoEAlltoAllTokenDispatcher)
                and not module.config.moe_permute_fusion
                and getattr(dispatcher, "shared_experts", None) is None):
            continue
        dispatcher.routes_per_token = routes_per_token(module.config)
        if module.experts.config.activation_func is torch.nn.functional.silu:
            dispatcher.token_scheme = module.experts.scheme
