"""Log-probabilities of the chosen tokens (and the policy's entropy) from the learner's
logits, a chunk of rows at a time.

Whole, the [tokens, vocab] fp32 log-softmax and its gradient are the largest tensors of a
long-response step: with Qwen3's 151936-row vocabulary, 16k tokens make 10 GB each. Here only
`_CHUNK_ELEMENTS` of fp32 exist at once; the backward recomputes each chunk's log-softmax from
the saved logits. Each row goes through `log_softmax(logits.float() / T)`, the rollout
engine's arithmetic (`rollout/embedded/sampling.py`), so the same logits give the same bits;
the backward runs autograd's ops for that expression, so the gradient's bits are those of the
whole-tensor path too (a run that starts from the same seed takes the same path).

Where kernels are registered for the logits' device (`quant.ops.token_logprob_ops`: CUDA), they
replace all of this: one read of the logits forward, one read and one write backward, and the
rollout engine's sampler calls the same kernels, so equal logits still give equal logprobs
(the kernels scale the logits by fp32(1 / T) rather than divide by T).
"""
from __future__ import annotations

from typing import Tuple

import torch

from ..quant import ops
from ..rl.objectives.diagnostics import entropy_of_log_probs

_CHUNK_ELEMENTS = 1 << 26  # fp32 elements of one chunk's log-softmax: 256 MiB


def _chunks(count: int, vocab: int):
    step = max(1, _CHUNK_ELEMENTS // vocab)
    return ((start, min(start + step, count)) for start in range(0, count, step))


class _TokenLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, rows, targets, temperature: float, with_entropy: bool):
        vocab = logits.shape[-1]
        logprobs = torch.empty(rows.shape[0], dtype=torch.float32, device=logits.device)
        entropy = torch.empty(rows.shape[0] if with_entropy else 0, dtype=torch.float32,
                              device=logits.device)
        for start, end in _chunks(rows.shape[0], vocab):
            scaled = logits.index_select(0, rows[start:end]).float().div_(temperature)
            chunk = torch.log_softmax(scaled, dim=-1)
            logprobs[start:end] = chunk.gather(-1, targets[start:end, None]).squeeze(-1)
            if with_entropy:
                entropy[start:end] = entropy_of_log_probs(chunk)
        ctx.save_for_backward(logits, rows, targets)
        ctx.temperature = temperature
        ctx.mark_non_differentiable(entropy)
        return logprobs, entropy

    @staticmethod
    def backward(ctx, grad_logprobs, _grad_entropy):
        logits, rows, targets = ctx.saved_tensors
        grad = torch.zeros_like(logits)
        for start, end in _chunks(rows.shape[0], logits.shape[-1]):
            scaled = logits.index_select(0, rows[start:end]).float().div_(ctx.temperature)
            log_policy = torch.log_softmax(scaled, dim=-1)
            picked = torch.zeros_like(log_policy).scatter_(
                -1, targets[start:end, None], grad_logprobs[start:end, None])
            # autograd's own log-softmax backward, then the division's and the cast's: the
            # gradient of the whole-tensor expression, bit for bit
            chunk = torch._log_softmax_backward_data(picked, log_policy, -1, torch.float32)
            grad.index_copy_(0, rows[start:end], (chunk / ctx.temperature).to(grad.dtype))
        return grad, None, None, None, None


class _KernelTokenLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, rows, targets, temperature: float, with_entropy: bool, kernels):
        logprobs, entropy, norm = kernels.forward(logits, rows, targets, temperature,
                                                  with_entropy)
        ctx.save_for_backward(logits, rows, targets, norm)
        ctx.temperature, ctx.kernels = temperature, kernels
        ctx.mark_non_differentiable(entropy)
        return logprobs, entropy

    @staticmethod
    def backward(ctx, grad_logprobs, _grad_entropy):
        logits, rows, targets, norm = ctx.saved_tensors
        grad = ctx.kernels.backward(grad_logprobs, logits, rows, targets, ctx.temperature, norm)
        return grad, None, None, None, None, None


def token_logprobs(logits: torch.Tensor, rows: torch.Tensor, targets: torch.Tensor,
                   temperature: float, with_entropy: bool = False
                   ) -> Tuple[torch.Tensor, torch.Tensor]:
    """logits [N, V] (any float dtype); rows [M]: distinct row indices; targets [M] ->
    (log p(target) [M] fp32, differentiable w.r.t. logits; entropy [M] fp32, or empty
    without with_entropy), both of the temperature-scaled softmax."""
    kernels = ops.token_logprob_ops(logits.device)
    if kernels is not None:
        return _KernelTokenLogprobs.apply(logits, rows, targets, temperature, with_entropy,
                                          kernels)
    return _TokenLogprobs.apply(logits, rows, targets, temperature, with_entropy)
