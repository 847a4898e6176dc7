"""A KV cache whose write positions live on the device, so that every decode step of the
embedded engine runs the same kernels on the same shapes and can be replayed from a CUDA
graph (rollout/embedded/decode_graph.py).

Megatron's static cache (StaticInferenceContext) slices its buffers with a host-side offset:
each step writes and reads a different range, and re-applies rotary embeddings to every
cached key. Here a forward names its positions in a device tensor (`PositionedKVCache.
positions`); keys are rotated once, at their own position, and written with `quant.ops.write_rows`
(index_copy_, or on CUDA a kernel that needs no sorting under torch's deterministic algorithms);
attention reads the first `visible` positions of the cache (a host-side size the caller
rounds up, so that one captured step serves many positions) and the caller's mask hides the
keys past each query. Rotating a key at its position is elementwise, so the stored keys are
bit-for-bit the keys Megatron's path rotates in every step.

The buffers start at zero: masked keys and values must be finite (SDPA adds -inf to the
scores of masked keys, and 0 x NaN would still poison a row).
"""
from __future__ import annotations

from typing import Optional, Tuple

import torch
from megatron.core.inference.contexts import StaticInferenceContext
from megatron.core.models.common.embeddings.rope_utils import apply_rotary_pos_emb
from megatron.core.models.common.embeddings.yarn_rotary_pos_embedding import (
    _yarn_get_concentration_factor_from_config,
)
from megatron.core.transformer.attention import SelfAttention
from megatron.core.transformer.enums import AttnMaskType

from ..quant import ops


class PositionedKVCache(StaticInferenceContext):
    """Static batching over `max_batch_size` rows and `max_sequence_length` positions; the
    model forward that uses it sets `positions` ([window], int64, the same for every row),
    `visible` (past the window's last position) and Megatron's
    `materialize_only_last_token_logits` (the window's last position's logits only; wrong
    for a window padded for sequence parallelism), and feeds a mask over `visible` keys."""

    def __init__(self, max_batch_size: int, max_sequence_length: int):
        super().__init__(max_batch_size, max_sequence_length)
        self.materialize_only_last_token_logits = False
        self.positions: Optional[torch.Tensor] = None
        self.visible = max_sequence_length

    def store(self, layer_number: int, key: torch.Tensor,
              value: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Write the window's keys and values ([window, batch, heads, dim]) at `positions`;
        returns this layer's first `visible` cached keys and values."""
        if key.shape[1] != self.max_batch_size:
            raise ValueError(f"PositionedKVCache holds {self.max_batch_size} rows, the forward "
                             f"has {key.shape[1]}")
        memory = self.key_value_memory_dict.get(layer_number)
        if memory is None:
            memory = tuple(torch.zeros(self.max_sequence_length, *t.shape[1:], dtype=t.dtype,
                                       device=t.device) for t in (key, value))
            self.key_value_memory_dict[layer_number] = memory
        keys, values = memory
        ops.write_rows(keys, self.positions, key)
        ops.write_rows(values, self.positions, value)
        return keys[:self.visible], values[:self.visible]


class PositionedCacheSelfAttention(SelfAttention):
    """Megatron's SelfAttention; with a PositionedKVCache its cache update is the one above
    (any other context, or none, takes Megatron's own path)."""

    def _adjust_key_value_for_inference(self, inference_context, query, key, value,
                                        rotary_pos_emb, *args, **kwargs):
        if not isinstance(inference_context, PositionedKVCache):
            return super()._adjust_key_value_for_inference(
                inference_context, query, key, value, rotary_pos_emb, *args, **kwargs)
        positions = inference_context.positions
        if rotary_pos_emb is not None:
            q_pos_emb, k_pos_emb = rotary_pos_emb
            key = apply_rotary_pos_emb(  # as Attention.forward rotates keys
                key, k_pos_emb.index_select(0, positions), config=self.config,
                mscale=_yarn_get_concentration_factor_from_config(self.config),
                cp_group=self.pg_collection.cp)
            # the query is rotated by Attention.forward; the cached keys already are
            rotary_pos_emb = (q_pos_emb.index_select(0, positions), None)
        key, value = inference_context.store(self.layer_number, key, value)
        # the caller's mask covers the visible keys
        return query, key, value, rotary_pos_emb, AttnMaskType.no_mask, None
