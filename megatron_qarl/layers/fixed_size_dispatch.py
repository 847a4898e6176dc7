"""A token exchange of fixed sizes for the MoE layers of a CUDA-graphed decode step under
tensor or expert parallelism.

Why: Megatron's all-to-all dispatcher sizes its exchange from token counts it copies to the
host (a GPU sync a CUDA graph cannot capture), and its all-gather dispatcher reads its
counts on the host too. Here every rank all-gathers the tokens, routing map and probs of the
TP x EP group (Megatron's all-gather dispatcher), permutes the gathered tokens of its local
experts into a buffer of the most rows they can take (tokens x min(top-k, local experts)),
with the counts kept on the device for the grouped kernels, and reduce-scatters the experts'
outputs back. No host reads a size, so the step can be captured.

The cost is the padding rows (the grouped kernels skip them, elementwise work does not) and
an all-gather of every token instead of an all-to-all of the routed copies: fine for decode
windows, too much for a prompt's prefill, which keeps the all-to-all. The experts are told what
share of the rows routing fills on average (`routed_share`), so the kernels choose their tiles
for those rows rather than for the capacity, EP times more at top-k <= local experts.
"""
from __future__ import annotations

import contextlib
from types import SimpleNamespace

import torch
from megatron.core.transformer.moe.moe_layer import MoELayer
from megatron.core.transformer.moe.token_dispatcher import MoEAllGatherTokenDispatcher

from ..quant import ops
from .token_dispatch import permute_to_capacity


class FixedSizeTokenDispatcher(MoEAllGatherTokenDispatcher):
    """Megatron's all-gather dispatcher with the permutation padded to capacity (above)."""

    @classmethod
    def like(cls, dispatcher) -> "FixedSizeTokenDispatcher":
        """One for the MoE layer `dispatcher` serves: its experts, config and groups."""
        groups = SimpleNamespace(ep=dispatcher.ep_group, expt_tp=dispatcher.tp_group,
                                 tp_ep=dispatcher.tp_ep_group)
        return cls(dispatcher.num_local_experts, dispatcher.local_expert_indices,
                   dispatcher.config, pg_collection=groups)

    @property
    def routed_share(self) -> float:
        """The mean share of the capacity that routing fills: a token's top-k choices fall on
        this rank's experts top-k x local / all experts times, of min(top-k, local) rows."""
        topk, local = self.router_topk, self.num_local_experts
        return topk * local / (self.config.num_moe_experts * min(topk, local))

    def dispatch_postprocess(self, hidden_states, probs):
        first, last = self.local_expert_indices[0], self.local_expert_indices[-1] + 1
        local_map = self.routing_map[:, first:last]
        capacity = local_map.shape[0] * min(self.router_topk, local_map.shape[1])
        tokens, self.local_probs = permute_to_capacity(
            hidden_states, local_map, probs[:, first:last], capacity)
        self.routing_map, self.local_map = None, local_map
        return tokens, local_map.sum(dim=0), self.local_probs

    def combine_preprocess(self, hidden_states):
        # the routed rows come first, in the order routed_sum reads them; it skips the padding
        routes = min(self.router_topk, self.local_map.shape[1])
        return ops.routed_sum(hidden_states, self.local_map, routes)


def exchanges_tokens(layer: MoELayer) -> bool:
    """Whether the layer's tokens cross ranks (TP x EP > 1)."""
    return layer.token_dispatcher.tp_ep_group.size() > 1


@contextlib.contextmanager
def fixed_size_exchange(model: torch.nn.Module):
    """Forwards of `model` inside exchange MoE tokens with FixedSizeTokenDispatcher in every
    layer whose tokens cross ranks, and tell experts that take it (QuantizedGroupedExperts)
    the share of their rows that routing fills."""
    layers = [m for m in model.modules() if isinstance(m, MoELayer) and exchanges_tokens(m)]
    own = [(m.token_dispatcher, getattr(m.experts, "routed_share", None)) for m in layers]
    for layer, (dispatcher, share) in zip(layers, own):
        if getattr(layer, "fixed_size_dispatcher", None) is None:
            layer.fixed_size_dispatcher = FixedSizeTokenDispatcher.like(dispatcher)
        layer.token_dispatcher = layer.fixed_size_dispatcher
        if share is not None:
            layer.experts.routed_share = layer.fixed_size_dispatcher.routed_share
    try:
        yield
    finally:
        for layer, (dispatcher, share) in zip(layers, own):
            layer.token_dispatcher = dispatcher
            if share is not None:
                layer.experts.routed_share = share
