"""Batched decoding on a Megatron GPTModel with a static KV cache (layers/kv_cache.py), the
same model object and quantized layers the learner trains.

Prompts of different lengths are right-padded: decoding starts at the shortest prompt, and a
row whose prompt is longer keeps its prompt token until its own prompt is consumed (the
scheme of Megatron's static text-generation controller). The causal mask means the padding
to the right of a position is never attended to.

Sequence parallelism (TP > 1, required for MoE) splits each forward's tokens over the TP
ranks, so a window is padded to a multiple of the TP size: the padding's keys land in the
cache after the real tokens, are never attended to (causal), and are overwritten by the next
window, which starts after the real tokens. The prompt window is cut to a multiple of the TP
size instead, so that it needs no padding and makes only its last position's logits.

Expert parallelism: every forward exchanges tokens over the expert-parallel ranks, which hold
different prompts. With `sync_group`, the ranks agree on one batch size (a rank with fewer rows
adds rows that are finished from the start) and one number of forwards, and decode until every
rank's rows are done: every rank runs the same forwards, of the same shapes after the prompt
window, which the fixed-size exchange of a CUDA-graphed decode step needs.

Routing replay: with `record_routes`, the experts every real forward routed to are kept
(routing_replay.RouteRecorder), and each sample carries its own, as SGLang's samples do.

Where the model allows it, the single-token steps replay a CUDA graph (decode_graph.py).
"""
from __future__ import annotations

import contextlib
from typing import List, Optional

import torch
import torch.distributed as dist
from megatron.core import parallel_state

from ..base import Sample, SamplingParams
from ..routing_replay import record_routing
from .decode_graph import CachedForward, LaggedAll
from .sampling import sample_next


@contextlib.contextmanager
def eval_mode(model: torch.nn.Module):
    """The model as it samples: eval mode (no dropout, no routers' auxiliary losses), the
    caller's mode restored after. The learner's old-logprob forward runs in it too."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


def causal_mask(length: int, device) -> torch.Tensor:
    """Megatron's convention: True where attention is NOT allowed, shape [1, 1, L, L]."""
    return torch.triu(torch.ones(length, length, dtype=torch.bool, device=device), 1)[None, None]


def agree(sizes: List[int], group, device) -> List[int]:
    """The largest of each size over the ranks of `group` (one host sync a batch)."""
    t = torch.tensor(sizes, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return t.tolist()


@torch.no_grad()  # else every decode step's graph stays alive through the KV cache
def generate_batch(model, prompts: List[List[int]], params: SamplingParams, pad_id: int,
                   generator: torch.Generator, device, window_multiple: int = 1,
                   sync_group: Optional[object] = None,
                   record_routes: bool = False, cuda_graph: bool = False) -> List[Sample]:
    """One sample per prompt row (repeat rows for n samples); window_multiple: the TP size
    under sequence parallelism, else 1; sync_group: the ranks that must decode in lockstep
    (data-parallel group under expert parallelism; a rank may then have no prompts), else None; record_routes: set each
    sample's routed_experts; cuda_graph: replay the decode steps from a CUDA graph (the
    caller checks decode_graph.graph_blocker)."""
    own_rows = len(prompts)  # none: this rank only joins its sync_group's forwards
    # host-side sizes: the loop below reads no device value except the stop check
    longest = max((len(p) for p in prompts), default=1)
    shortest = min((len(p) for p in prompts), default=1)
    # the prompt window ends at the position sampled from, or under sequence parallelism at a
    # multiple of the TP size before it (the single-token windows then consume the rest of
    # the shortest prompt, as they do longer prompts): unpadded, it makes its last
    # position's logits only, not batch x prompt x vocab
    prompt_end = shortest - shortest % window_multiple or shortest
    batch, steps = own_rows, longest + params.max_new_tokens - prompt_end  # forwards at most
    if sync_group is not None:
        batch, steps = agree([batch, steps], sync_group, device)
        prompts = list(prompts) + [[pad_id]] * (batch - own_rows)
    total = prompt_end + steps
    lengths = torch.tensor([len(p) for p in prompts], device=device)
    room = total + window_multiple - 1
    tokens = torch.full((batch, room), pad_id, dtype=torch.long)
    for row, prompt in enumerate(prompts):
        tokens[row, :len(prompt)] = torch.tensor(prompt)
    tokens = tokens.to(device)
    stop = torch.tensor(list(params.stop_token_ids), dtype=torch.long, device=device)
    logprobs = torch.zeros(batch, params.max_new_tokens, device=device)
    generated = torch.zeros(batch, dtype=torch.long, device=device)
    finished = torch.arange(batch, device=device) >= own_rows  # the added rows are done
    stopped = torch.zeros(batch, dtype=torch.bool, device=device)

    forward = CachedForward(model, batch, room, device, cuda_graph)
    all_finished = LaggedAll(device, sync_group)
    recording = contextlib.nullcontext()
    if record_routes:
        tp_group = (parallel_state.get_tensor_model_parallel_group()
                    if window_multiple > 1 else None)
        recording = record_routing(model, batch, room, tp_group)
    with recording as recorder:
        start, end = 0, prompt_end
        while end < total and not all_finished.read():
            stop_at = end + (-(end - start)) % window_multiple
            last_only = stop_at == end  # padding for sequence parallelism: all its logits
            logits = forward(tokens[:, start:stop_at], start, last_only)
            if recorder is not None:
                recorder.keep(start, end - start)
            # before the shortest prompt's end every row still reads its prompt: no draw, so
            # the generator's draws are those of an uncut prompt window
            if end >= shortest:
                column = logits.shape[1] - 1 if last_only else end - start - 1
                next_tokens, next_logprobs = sample_next(logits[:, column, :], params, generator)
                active = (lengths <= end) & ~finished
                tokens[:, end] = torch.where(active, next_tokens, tokens[:, end])
                # logprobs[row, generated[row]] = next_logprobs[row] for active rows, without
                # the host sync of nonzero(): inactive rows write their current value back
                slot = generated.clamp(max=params.max_new_tokens - 1).unsqueeze(1)
                kept = logprobs.gather(1, slot).squeeze(1)
                logprobs.scatter_(1, slot, torch.where(active, next_logprobs, kept).unsqueeze(1))
                generated += active.long()
                hit_stop = active & torch.isin(next_tokens, stop)
                stopped |= hit_stop
                finished |= hit_stop | (generated >= params.max_new_tokens)
            all_finished.push(finished)
            start, end = end, end + 1
        routes = recorder.routes() if recorder is not None else None

    samples = []
    tokens, logprobs = tokens.tolist(), logprobs.tolist()  # one device-to-host copy each
    for row, (n, hit) in enumerate(zip(generated.tolist()[:own_rows], stopped.tolist())):
        p = len(prompts[row])
        samples.append(Sample(
            prompt_ids=list(prompts[row]),
            response_ids=tokens[row][p:p + n],
            sampler_logprobs=logprobs[row][:n],
            # SGLang checks the length limit first: a stop token as the last allowed one
            # finishes by length there
            finish_reason="stop" if hit and n < params.max_new_tokens else "length",
            routed_experts=None if routes is None else routes[row, :p + n - 1],
        ))
    return samples
