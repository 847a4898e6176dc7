"""Rollout samples -> padded tensors the learner consumes, and their split into micro-batches
bucketed by length (sorted, so each micro-batch pads to similar lengths).

Response tensors are [B, R] (R = longest response): entry j of row b is response token j,
predicted by the logits at absolute position prompt_len_b + j - 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import torch
import torch.distributed as dist

from ..rollout.base import Sample


@dataclass
class ResponseBatch:
    input_ids: torch.Tensor  # [B, L] prompt + response, right-padded
    predict_pos: torch.Tensor  # [B, R] position of the logits predicting response token j
    targets: torch.Tensor  # [B, R] response tokens (pad beyond each length)
    mask: torch.Tensor  # [B, R] bool
    sampler_logprobs: torch.Tensor  # [B, R] fp32
    advantages: torch.Tensor  # [B] fp32
    lengths: torch.Tensor  # [B] prompt + response tokens
    old_logprobs: Optional[torch.Tensor] = None  # [B, R], filled by the learner
    # [B, L, layers, top_k] the engine's experts per token (--rollout-routing-replay)
    routed_experts: Optional[torch.Tensor] = None


def collate(samples: Sequence[Sample], advantages: torch.Tensor, pad_id: int,
            device, replay_experts: Optional[int] = None) -> ResponseBatch:
    """replay_experts: the model's expert count, to carry the samples' routed experts (checked
    against it), aligned with input_ids, for replay."""
    lengths = [len(s.prompt_ids) + len(s.response_ids) for s in samples]
    longest = max(lengths)
    resp = max(1, max(len(s.response_ids) for s in samples))
    input_ids = torch.full((len(samples), longest), pad_id, dtype=torch.long)
    targets = torch.full((len(samples), resp), pad_id, dtype=torch.long)
    sampler = torch.zeros(len(samples), resp)
    mask = torch.zeros(len(samples), resp, dtype=torch.bool)
    predict = torch.zeros(len(samples), resp, dtype=torch.long)
    for b, s in enumerate(samples):
        p, r = len(s.prompt_ids), len(s.response_ids)
        input_ids[b, :p + r] = torch.tensor(s.prompt_ids + s.response_ids)
        targets[b, :r] = torch.tensor(s.response_ids, dtype=torch.long)
        sampler[b, :r] = torch.tensor(s.sampler_logprobs)
        mask[b, :r] = True
        predict[b] = (p - 1 + torch.arange(resp)).clamp(max=p + r - 1)
    routed = None
    if replay_experts:
        from ..rollout.routing_replay import routing_table

        routed = routing_table(samples, longest, replay_experts).to(device)
    return ResponseBatch(input_ids.to(device), predict.to(device),
                         targets.to(device), mask.to(device), sampler.to(device),
                         advantages.float().to(device), torch.tensor(lengths, device=device),
                         routed_experts=routed)


def select(batch: ResponseBatch, rows: List[int]) -> ResponseBatch:
    """A sub-batch, trimmed to its own longest sequence and response."""
    idx = torch.tensor(rows, device=batch.input_ids.device)
    mask = batch.mask[idx]
    resp = max(1, int(mask.sum(-1).max()))
    longest = int(batch.lengths[idx].max())

    def rows_of(t, width=None):
        return None if t is None else (t[idx] if width is None else t[idx][:, :width])

    return ResponseBatch(
        rows_of(batch.input_ids, longest),
        rows_of(batch.predict_pos, resp), rows_of(batch.targets, resp), mask[:, :resp],
        rows_of(batch.sampler_logprobs, resp), batch.advantages[idx], batch.lengths[idx],
        rows_of(batch.old_logprobs, resp), rows_of(batch.routed_experts, longest),
    )


def micro_batch_rows(total_lengths: Sequence[int], micro_batch_size: int,
                     max_tokens: int, group=None) -> List[List[int]]:
    """Index lists of the micro-batches of one mini-batch.

    Fixed size (max_tokens == 0): micro_batch_size rows each. Token budget: rows sorted by
    length and packed greedily so that rows x longest <= max_tokens; then the largest chunks
    are halved until every data-parallel rank has the same count (MoE all-to-all needs
    matching calls; ranks hold equally many rows, so the count never exceeds the rows).
    """
    order = sorted(range(len(total_lengths)), key=lambda i: total_lengths[i])
    if not max_tokens:
        return [order[i:i + micro_batch_size] for i in range(0, len(order), micro_batch_size)]
    chunks: List[List[int]] = []
    for i in order:
        if chunks and (len(chunks[-1]) + 1) * total_lengths[i] <= max_tokens:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    target = len(chunks)
    if group is not None and dist.is_initialized():
        t = torch.tensor([target], dtype=torch.long,
                         device="cuda" if dist.get_backend(group) == "nccl" else "cpu")
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
        target = int(t)
    while len(chunks) < target:
        big = max(range(len(chunks)), key=lambda c: len(chunks[c]))
        half = len(chunks[big]) // 2
        chunks[big:big + 1] = [chunks[big][:half], chunks[big][half:]]
    return chunks
