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


def test_eps_keeps_constant_groups_finite():
    adv = group_normalized_advantages(torch.full((6,), 0.7), 3)
    assert torch.equal(adv, torch.zeros(6))


@pytest.mark.parametrize("rewards, group_size, message", [
    (torch.zeros(4), 1, "group_size"),
    (torch.zeros(5), 2, "do not split into groups of 2"),
    (torch.zeros(2, 2), 2, "one value per response"),
])
def test_invalid_inputs(rewards, group_size, message):
    with pytest.raises(ValueError, match=message):
        group_normalized_advantages(rewards, group_size)
