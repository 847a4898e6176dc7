"""The two sums of an MoE layer's token permutation, without atomics.

Megatron's all-to-all dispatcher copies each token into the rows of its top-k experts and, after
the experts, adds the rows back with `scatter_add_`; the backward of the copy adds the rows'
gradients with `index_add_`. Both are bf16 atomics on CUDA: the order of the additions, and so
the bits of the sum, change from run to run (the 30B-shaped models' generations and gradients
were not repeatable), and they are slow. With torch's deterministic algorithms both take
`index_add_`'s sorting path, slower still.

For dropless top-k routing every token has at most k rows, found from the routing map alone,
so both sums are `quant.ops.routed_sum`: a token's rows in ascending expert order, in fp32,
rounded once (a Triton kernel on CUDA). The results repeat bit for bit, in any mode.
"""
from __future__ import annotations

import torch

from ..quant import ops


class CombineRows(torch.autograd.Function):
    """[T, hidden]: each token's permuted rows summed. Its gradient gives each row its token's
    gradient, a gather (token_of_row: the permutation's token index of each row)."""

    @staticmethod
    def forward(ctx, rows, routing_map, token_of_row, routes):
        ctx.save_for_backward(token_of_row)
        return ops.routed_sum(rows, routing_map, routes)

    @staticmethod
    def backward(ctx, grad):
        (token_of_row,) = ctx.saved_tensors
        return grad.index_select(0, token_of_row), None, None, None


class PermutedRows(torch.autograd.Function):
    """`rows`, the permutation of `tokens` that Megatron made from a detached copy, with the
    gradient going back to `tokens` as the routed sum of the rows' gradients."""

    @staticmethod
    def forward(ctx, tokens, rows, routing_map, routes):
        ctx.save_for_backward(routing_map)
        ctx.routes = routes
        return rows

    @staticmethod
    def backward(ctx, grad_rows):
        (routing_map,) = ctx.saved_tensors
        return ops.routed_sum(grad_rows, routing_map, ctx.routes), None, None, None


def routes_per_token(config) -> int | None:
    """top-k when every token has at most that many rows in the permutation (dropless routing,
    the routing map not padded), else None: Megatron's combine stays."""
    if (config.moe_expert_capacity_factor is not None
            or getattr(config, "moe_router_padding_for_quantization", False)
            or config.moe_permute_fusion):
        return None
    return config.moe_router_topk
