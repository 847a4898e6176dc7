"""Warm start (SFT): teach a randomly initialised model the task's answer format before RL,
so that rewards are not all zero and group-normalised advantages carry signal.

Cross-entropy on the answer tokens (and eos) after the prompt, through the same learner
forward (aligned quantized when QaRL is on) and the same optimizer machinery as RL."""
from __future__ import annotations

from typing import Dict, List

import torch

from ..rl.data import PromptOrder, PromptRow
from ..rollout.base import Sample
from .batches import collate
from .distributed import dp_rank_and_size
from .logprobs import response_logprobs
from .updates import optimizer_step


def sft_samples(rows: List[PromptRow], tokenizer) -> List[Sample]:
    """The gold answer and eos as the "response" of each prompt."""
    samples = []
    for row in rows:
        target = tokenizer.encode(row.answer) + [tokenizer.eos_id]
        samples.append(Sample(row.prompt_ids, target, [0.0] * len(target), "stop"))
    return samples


def warm_start(model, optimizer, scheduler, rows: List[PromptRow], tokenizer, args, device,
               length_multiple: int = 1, on_step=None) -> Dict[str, float]:
    order = PromptOrder(len(rows), args.seed + 1)
    metrics: Dict[str, float] = {}

    def loss_fn(micro, normalizer):
        logprobs = response_logprobs(model, micro, 1.0, length_multiple)
        loss = -torch.where(micro.mask, logprobs, 0.0).sum() / normalizer.clamp(min=1.0)
        return loss, {}

    for it in range(1, args.sft_iters + 1):
        rank, size = dp_rank_and_size()
        picked = [rows[i] for i in order.next_indices(args.sft_batch_size)][rank::size]
        samples = sft_samples(picked, tokenizer)
        batch = collate(samples, torch.zeros(len(samples)), tokenizer.pad_id, device)
        metrics, _ = optimizer_step(
            model, optimizer, batch, list(range(len(samples))), scheduler=scheduler,
            micro_batch_size=args.micro_batch_size,
            max_tokens=args.max_tokens_per_micro_batch, loss_fn=loss_fn,
            normalizer=lambda mask: mask.sum(), loss_name="sft_loss",
        )
        if on_step is not None:
            on_step(it, metrics)
    return metrics
