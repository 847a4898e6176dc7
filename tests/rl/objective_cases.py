"""Builds loss inputs from chosen per-token ratios, so tests can state ratios and do the
arithmetic by hand."""
import math

import torch

PAD = float("nan")


def logprobs_from_ratios(ratios, old_probs=None, pad_value=-float("inf")):
    """Rows of per-token ratios pi_theta/pi_old (None = padding) -> (logprobs leaf, old, mask).

    old logprobs default to log(0.5); padding holds pad_value in old and NaN in logprobs so
    that any leak of padding into the loss shows up as NaN."""
    width = max(len(row) for row in ratios)
    old = torch.full((len(ratios), width), pad_value)
    current = torch.full((len(ratios), width), PAD)
    mask = torch.zeros(len(ratios), width, dtype=torch.bool)
    for b, row in enumerate(ratios):
        for t, ratio in enumerate(row):
            if ratio is None:
                continue
            p_old = 0.5 if old_probs is None else old_probs[b][t]
            old[b, t] = math.log(p_old)
            current[b, t] = math.log(p_old) + math.log(ratio)
            mask[b, t] = True
    return current.requires_grad_(), old, mask


def sampler_from_weights(old, mask, weights):
    """Sampler logprobs such that pi_old/pi_sampler equals the given per-token weights."""
    sampler = torch.full_like(old, -float("inf"))
    for b, row in enumerate(weights):
        for t, weight in enumerate(row):
            if weight is not None:
                sampler[b, t] = old[b, t] - math.log(weight)
    assert torch.equal(sampler.isfinite(), mask)
    return sampler
