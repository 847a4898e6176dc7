"""Token sampling with temperature / top-k / top-p, and the logprob SGLang reports: that of
the temperature-scaled distribution before top-k/top-p truncation, which is what the learner
can recompute (it never sees the truncation)."""
from __future__ import annotations

from typing import Tuple

import torch

from ...quant.ops import race_argmax, token_logprob_ops
from ..base import SamplingParams


def _cuts_top_k(top_k: int, vocab: int) -> bool:
    return 0 < top_k < vocab


def _truncate(logprobs: torch.Tensor, top_k: int, top_p: float) -> torch.Tensor:
    """-inf outside the top-k and outside the smallest top-p nucleus (the top token stays),
    both taken on the temperature-scaled distribution and intersected, as SGLang's sampler
    does (flashinfer's "joint" order; vLLM renormalizes after top-k, so its nucleus can be
    smaller). Exactly k tokens by rank, as SGLang keeps them: bf16 logits tie often (a spacing
    of 0.125 from 16 up), and a threshold on the k-th value kept every token tied with it."""
    if _cuts_top_k(top_k, logprobs.shape[-1]):
        kept = torch.topk(logprobs, top_k, dim=-1).indices
        cut = torch.ones_like(logprobs, dtype=torch.bool).scatter_(-1, kept, False)
        logprobs = logprobs.masked_fill(cut, float("-inf"))
    if top_p < 1.0:
        sorted_lp, order = torch.sort(logprobs, dim=-1, descending=True)
        before = torch.cumsum(sorted_lp.exp(), dim=-1) - sorted_lp.exp()
        drop_sorted = before >= top_p  # mass already covered before this token
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logprobs = logprobs.masked_fill(drop, float("-inf"))
    return logprobs


def sample_next(logits: torch.Tensor, params: SamplingParams,
                generator: torch.Generator) -> Tuple[torch.Tensor, torch.Tensor]:
    """logits [B, V] -> (token ids [B], their temperature-scaled logprobs [B], fp32).

    Drawn by an exponential race (`quant.ops.race_argmax`, the Gumbel-max trick), which needs
    no normalization pass: softmax + torch.multinomial took 10 more launches and 0.07 ms more
    GPU time a decode step (3 Qwen3-30B-A3B layers, batch 32, H100;
    docs/results/grouped_bf16_experts_h100_2026-11-24/sampler_ab.txt). The logprobs are
    `log_softmax(logits.float() / T)`, the learner's arithmetic (a division by 1 is skipped:
    it changes no bit). Where token-logprob kernels are registered (CUDA) the learner takes
    them, and so does this: the draw and the logprobs in one read of the logits, or with
    top-k/top-p the race on torch's truncated log-softmax and the logprobs by the kernel."""
    kernels = token_logprob_ops(logits.device)
    truncated = _cuts_top_k(params.top_k, logits.shape[-1]) or params.top_p < 1.0
    if kernels is not None and not truncated:
        return kernels.sample(logits, params.temperature, generator)
    scaled = logits.float()
    if params.temperature != 1.0:
        scaled = scaled / params.temperature
    logprobs = torch.log_softmax(scaled, dim=-1)
    if params.top_k == 1:  # greedy: the first of tied maxima, as SGLang's argmax
        tokens = logits.argmax(-1)
    else:
        tokens = race_argmax(_truncate(logprobs, params.top_k, params.top_p), generator)
    if kernels is not None:
        rows = torch.arange(logits.shape[0], device=logits.device)
        return tokens, kernels.forward(logits, rows, tokens, params.temperature, False)[0]
    return tokens, logprobs.gather(-1, tokens[:, None]).squeeze(-1)
