"""Group-normalised advantages by hand."""
import math

import pytest
import torch

from megatron_qarl.rl.objectives import group_normalized_advantages


def test_group_normalised_by_hand():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    adv = group_normalized_advantages(rewards, group_size=4)
    # group 0: mean 0.5, unbiased std sqrt(4 * 0.25 / 3); group 1: all equal -> 0
    std = math.sqrt(4 * 0.25 / 3)
    expected = torch.tensor([0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0]) / (std + 1e-6)
    expected[4:] = 0.0
    torch.testing.assert_close(adv, expected)


def test_without_std_normalisation():
    adv = group_normalized_advantages(torch.tensor([3.0, 1.0, 2.0, 2.0]), 2, normalize_std=False)
    torch.testing.assert_close(adv, torch.tensor([1.0, -1.0, 0.0, 0.0]))


@pytest.mark.parametrize("value, group_size", [(0.7, 3), (0.7, 8), (2.7, 16), (0.1, 8)])
def test_constant_groups_get_exact_zeros(value, group_size):
    """fp32's mean of 8 x 0.7 misses 0.7 by an ulp: without the exact test that residue over a
    std of rounding noise gave |A| = 0.056 (and 0.19 for 16 x 2.7)."""
    rewards = torch.cat([torch.full((group_size,), value), torch.arange(group_size).float() ** 2])
    for normalize_std in (True, False):
        adv = group_normalized_advantages(rewards, group_size, normalize_std=normalize_std)
        assert torch.equal(adv[:group_size], torch.zeros(group_size))
        assert adv[group_size:].abs().min() > 0.01  # the other group is untouched


@pytest.mark.parametrize("rewards, group_size, message", [
    (torch.zeros(4), 1, "group_size"),
    (torch.zeros(5), 2, "do not split into groups of 2"),
    (torch.zeros(2, 2), 2, "one value per response"),
])
def test_invalid_inputs(rewards, group_size, message):
    with pytest.raises(ValueError, match=message):
        group_normalized_advantages(rewards, group_size)
