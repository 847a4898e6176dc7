"""Routing replay: the learner's routers take the experts the engine chose for the same
tokens, through megatron-core's RouterReplay (build the model with
`moe_enable_routing_replay=True`).

SGLang returns, per sample, int32 [prompt+response-1, layers, top_k]: the routing of every
token that was forwarded (the last sampled token never was). The learner's MoE layers see
tokens in Megatron's [seq, batch] order flattened to rows `s * batch + b`, and under sequence
parallelism each TP rank only its slice of the sequence. Rows without an engine routing
(the final token, padding) get experts 0..k-1: their outputs carry no loss.
"""
from __future__ import annotations

import contextlib
from typing import List, Sequence

import torch

from ..base import Sample

FLAG = "--rollout-routing-replay"


def routing_table(samples: Sequence[Sample], seq_len: int) -> torch.Tensor:
    """[batch, seq_len, layers, top_k] int64 expert ids, laid out like the learner's padded
    batch (row b: sample b's prompt+response left-aligned); the trainer carries it with the
    batch so every micro-batch replays exactly its own samples' routes."""
    if any(s.routed_experts is None for s in samples):
        raise ValueError(f"{FLAG} needs routed experts on every sample; the engine was not "
                         f"asked for them (start SGLang with --enable-return-routed-experts)")
    _, layers, top_k = samples[0].routed_experts.shape
    table = torch.arange(top_k, dtype=torch.int64).expand(len(samples), seq_len, layers, top_k)
    table = table.clone()
    for b, s in enumerate(samples):
        routed = s.routed_experts.to(torch.int64)
        if routed.shape[1:] != (layers, top_k):
            raise ValueError(f"{FLAG}: sample {b} has routed experts of shape "
                             f"{tuple(routed.shape)}, others [*, {layers}, {top_k}]")
        if routed.shape[0] > seq_len:
            raise ValueError(f"sample {b} has {routed.shape[0] + 1} tokens, more than the "
                             f"learner's sequence length {seq_len}")
        table[b, : routed.shape[0]] = routed
    return table


def table_to_layers(table: torch.Tensor, sp_rank: int = 0,
                    sp_size: int = 1) -> List[torch.Tensor]:
    """[batch, seq, layers, top_k] -> per MoE layer [seq/sp_size * batch, top_k], rows in
    the order the router sees tokens (`s * batch + b`, this rank's sequence slice)."""
    seq_len = table.shape[1]
    if seq_len % sp_size:
        raise ValueError(f"sequence length {seq_len} is not divisible by the "
                         f"sequence-parallel size {sp_size}")
    local = seq_len // sp_size
    table = table.transpose(0, 1)[sp_rank * local:(sp_rank + 1) * local]
    top_k = table.shape[-1]
    return [table[:, :, layer].reshape(-1, top_k) for layer in range(table.shape[2])]


def replay_indices(samples: Sequence[Sample], seq_len: int, sp_rank: int = 0,
                   sp_size: int = 1) -> List[torch.Tensor]:
    """Per MoE layer, [seq_len/sp_size * batch, top_k] int64 expert ids for a padded batch
    of `samples` (each prompt+response left-aligned in a row of `seq_len` tokens)."""
    if seq_len % sp_size:
        raise ValueError(f"sequence length {seq_len} is not divisible by the "
                         f"sequence-parallel size {sp_size}")
    return table_to_layers(routing_table(samples, seq_len), sp_rank, sp_size)


@contextlib.contextmanager
def replay_routing(per_layer: List[torch.Tensor]):
    """Forward passes inside use the given expert ids in every MoE layer."""
    from megatron.core.transformer.moe.router_replay import RouterReplay, RouterReplayAction

    if not RouterReplay.global_router_replay_instances:
        raise ValueError(f"{FLAG}: the model has no RouterReplay; build it with "
                         f"moe_enable_routing_replay=True")
    RouterReplay.set_replay_data(per_layer)
    RouterReplay.set_global_router_replay_action(RouterReplayAction.REPLAY_FORWARD)
    try:
        yield
    finally:
        RouterReplay.clear_global_router_replay_action()
        RouterReplay.clear_global_indices()
