"""Per-response-token log-probabilities of the temperature-scaled policy from one forward of
the learner's Megatron model: the same quantity the rollout engine reports, so the
learner/sampler difference measures only weight format and kernel numerics."""
from __future__ import annotations

import contextlib

import torch

from ..rollout.embedded.decode_graph import logits_in_model_dtype
from ..rollout.embedded.generate import causal_mask
from ..rollout.routing_replay import UNROUTED, replay_routing, table_to_layers
from .batches import ResponseBatch
from .token_logprobs import token_logprobs


def response_logprobs(model, batch: ResponseBatch, temperature: float,
                      length_multiple: int = 1, with_entropy: bool = False):
    """[B, R] fp32, differentiable when grad is enabled; 0 outside batch.mask.

    length_multiple: the TP size under sequence parallelism; the right padding it adds is
    never attended to by the real positions (causal) and never read.
    with_entropy: also return the policy's entropy at each response position ([B, R], 0
    outside the mask, no gradient)."""
    pad = (-batch.input_ids.shape[1]) % length_multiple
    ids = torch.nn.functional.pad(batch.input_ids, (0, pad))
    length = ids.shape[1]
    positions = torch.arange(length, device=ids.device).expand_as(ids)
    # the routers' load-balancing (and z-) losses leave the right padding out. megatron-core
    # 0.16.1's router reads True as padding (`~padding_mask` are its valid tokens), whatever
    # its docstrings say; tests/trainer/test_router_padding.py holds it to that.
    padding = positions >= batch.lengths[:, None]
    with _replay(model, batch, pad, length_multiple):
        logits = model(ids, positions, causal_mask(length, ids.device), padding_mask=padding,
                       runtime_gather_output=True, **logits_in_model_dtype(model))
    seq, col = batch.mask.nonzero(as_tuple=True)  # response tokens only, no padding rows
    rows = seq * logits.shape[1] + batch.predict_pos[seq, col]
    lp, entropy = token_logprobs(logits.reshape(-1, logits.shape[-1]), rows,
                                 batch.targets[seq, col], temperature, with_entropy)
    zeros = torch.zeros(batch.mask.shape, dtype=torch.float32, device=lp.device)
    token_lp = zeros.index_put((seq, col), lp)
    return (token_lp, zeros.index_put((seq, col), entropy)) if with_entropy else token_lp


def _replay(model, batch: ResponseBatch, pad: int, length_multiple: int):
    """The routers take this batch's engine routes (--rollout-routing-replay); padding
    rows are UNROUTED (their outputs are never read)."""
    table = batch.routed_experts
    if table is None:
        return contextlib.nullcontext()
    if pad:
        table = torch.cat([table, table.new_full((table.shape[0], pad, *table.shape[2:]),
                                                 UNROUTED)], dim=1)
    sp_rank = 0
    if length_multiple > 1:  # sequence parallel: this TP rank's slice of the sequence
        from megatron.core import parallel_state

        sp_rank = parallel_state.get_tensor_model_parallel_rank()
    return replay_routing(model, table_to_layers(table, sp_rank, length_multiple))
