"""Routing replay: the learner's routers take the experts the rollout engine chose for the
same tokens, through megatron-core's RouterReplay (build the model with
`moe_enable_routing_replay=True`). A near-tie in a router that the sampler and the learner
break differently sends a token through other experts; replay removes that source of
sampler/learner mismatch.

Both engines give, per sample, [prompt+response-1, layers, top_k] expert ids: the routing of
every token that was forwarded (the last sampled token never was). SGLang returns it
(`--enable-return-routed-experts`); the embedded engine records it (RouteRecorder).

The learner's MoE layers see tokens in Megatron's [seq, batch] order flattened to rows
`s * batch + b`, and under sequence parallelism each TP rank only its slice of the sequence.
Rows without an engine routing (the final token, padding) carry no loss; they get experts
spread over all of them (spread_unrouted), since one fixed set would send every padding row of
a micro-batch to one expert-parallel rank.
"""
from __future__ import annotations

import contextlib
from typing import List, Optional, Sequence

import torch
import torch.distributed as dist

from .base import Sample

FLAG = "--rollout-routing-replay"
#: the route of a position no engine forwarded (padding, each row's last token)
UNROUTED = -1


def routing_table(samples: Sequence[Sample], seq_len: int, num_experts: int) -> torch.Tensor:
    """[batch, seq_len, layers, top_k] int64 expert ids, laid out like the learner's padded
    batch (row b: sample b's prompt+response left-aligned), UNROUTED past each sample's routes;
    the trainer carries it with the batch so every micro-batch replays exactly its own
    samples' routes. Routes of another length than the sample's forwarded tokens, or ids past
    the model's experts, are refused: they would replay other tokens' experts."""
    if any(s.routed_experts is None for s in samples):
        raise ValueError(f"{FLAG} needs routed experts on every sample; the engine was not "
                         f"asked for them (the embedded engine: record_routes=True; SGLang: "
                         f"start it with --enable-return-routed-experts)")
    _, layers, top_k = samples[0].routed_experts.shape
    table = torch.full((len(samples), seq_len, layers, top_k), UNROUTED, dtype=torch.int64)
    for b, s in enumerate(samples):
        routed = s.routed_experts.to(torch.int64)
        forwarded = len(s.prompt_ids) + len(s.response_ids) - 1
        if routed.shape != (forwarded, layers, top_k):
            raise ValueError(f"{FLAG}: sample {b} has routed experts of shape "
                             f"{tuple(routed.shape)}; its prompt and response forwarded "
                             f"{forwarded} tokens, so [{forwarded}, {layers}, {top_k}]")
        if forwarded + 1 > seq_len:  # its tokens, each a row of the learner's input
            raise ValueError(f"sample {b} has {forwarded + 1} tokens, more than the "
                             f"learner's sequence length {seq_len}")
        if routed.numel() and not 0 <= int(routed.min()) <= int(routed.max()) < num_experts:
            raise ValueError(f"{FLAG}: sample {b} routes to experts {int(routed.min())}.."
                             f"{int(routed.max())}; the model has {num_experts}. SGLang returns "
                             f"physical expert ids once expert-location dispatch is on (EPLB, "
                             f"redundant experts): start it without them to replay its routes")
        table[b, :forwarded] = routed
    return table


def spread_unrouted(indices: torch.Tensor, num_experts: int) -> torch.Tensor:
    """[rows, top_k] expert ids with UNROUTED rows given k distinct experts each, row r from
    expert (r * k) mod E on: spread over every expert (and so every EP rank) as a router's
    choice would be, where 0..k-1 for all sent every padding row to EP rank 0."""
    rows, top_k = indices.shape
    spread = (torch.arange(rows, device=indices.device)[:, None] * top_k
              + torch.arange(top_k, device=indices.device)) % num_experts
    return torch.where(indices[:, :1] == UNROUTED, spread, indices)


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


def replay_indices(samples: Sequence[Sample], seq_len: int, num_experts: int, sp_rank: int = 0,
                   sp_size: int = 1) -> List[torch.Tensor]:
    """Per MoE layer, [seq_len/sp_size * batch, top_k] int64 expert ids for a padded batch
    of `samples` (each prompt+response left-aligned in a row of `seq_len` tokens)."""
    return table_to_layers(routing_table(samples, seq_len, num_experts), sp_rank, sp_size)


def model_routers(model) -> list:
    """The routers (with a RouterReplay each) of this model's MoE layers, in layer order.
    megatron-core also keeps a process-wide list of RouterReplays, which holds those of every
    model built, the embedded engine's own copy included; replay and recording must address
    one model's."""
    routers = [m for m in model.modules() if getattr(m, "router_replay", None) is not None]
    if not routers:
        raise ValueError(f"{FLAG}: the model has no RouterReplay; build it with "
                         f"moe_enable_routing_replay=True")
    return routers


@contextlib.contextmanager
def _routers_in(model, action):
    from megatron.core.transformer.moe.router_replay import RouterReplayAction

    routers = model_routers(model)
    for r in routers:
        r.router_replay.set_router_replay_action(getattr(RouterReplayAction, action))
    try:
        yield routers
    finally:
        for r in routers:
            r.router_replay.clear_router_replay_action()
            r.router_replay.clear_indices()


@contextlib.contextmanager
def replay_routing(model, per_layer: List[torch.Tensor]):
    """Forward passes of `model` inside use the given expert ids in every MoE layer (UNROUTED
    rows: spread_unrouted's)."""
    with _routers_in(model, "REPLAY_FORWARD") as routers:
        if len(per_layer) != len(routers):
            raise ValueError(f"{FLAG}: routes for {len(per_layer)} MoE layers, the model "
                             f"has {len(routers)}")
        for r, indices in zip(routers, per_layer):
            r.router_replay.set_target_indices(
                spread_unrouted(indices, r.config.num_moe_experts))
        yield


@contextlib.contextmanager
def record_routing(model, batch: int, room: int, tp_group: Optional[object] = None):
    """Yields a RouteRecorder for a decode loop over a right-padded batch of `batch` rows and
    `room` positions; tp_group: the TP group under sequence parallelism, else None."""
    with _routers_in(model, "RECORD") as routers:
        yield RouteRecorder([r.router_replay for r in routers], batch, room, tp_group)


class RouteRecorder:
    """Collects, forward by forward, the experts the routers chose while the embedded engine
    decodes, as the [prompt+response-1, layers, top_k] routes SGLang returns.

    Under sequence parallelism each TP rank routes only its slice of a window's tokens, so the
    slices are gathered over the TP group (rows `s * batch + b`, rank-major in s)."""

    def __init__(self, replays: list, batch: int, room: int, tp_group: Optional[object]):
        self.replays, self.batch, self.room, self.tp_group = replays, batch, room, tp_group
        self.table: Optional[torch.Tensor] = None

    def keep(self, start: int, count: int) -> None:
        """The last forward fed positions start.. of every row; keep the first `count`."""
        routes = torch.stack([r.get_recorded_indices() for r in self.replays], dim=1)
        if self.tp_group is not None:
            routes = self._gather(routes)  # [window * batch, layers, top_k]
        routes = routes.view(-1, self.batch, *routes.shape[1:])[:count].transpose(0, 1)
        if self.table is None:
            self.table = torch.empty(self.batch, self.room, *routes.shape[2:],
                                     dtype=torch.int16, device=routes.device)
        self.table[:, start:start + count] = routes.to(torch.int16)

    def _gather(self, local: torch.Tensor) -> torch.Tensor:
        size = dist.get_world_size(self.tp_group)
        out = local.new_empty(local.shape[0] * size, *local.shape[1:])
        dist.all_gather_into_tensor(out, local.contiguous(), group=self.tp_group)
        return out

    def routes(self) -> torch.Tensor:
        """[batch, room, layers, top_k] int16 on the CPU (one device-to-host copy)."""
        return self.table.cpu()
