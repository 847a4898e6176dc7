"""The loss treats old logprobs, sampler logprobs and advantages as constants: the gradient
reaches the current logprobs only, whatever the caller passed in."""
import pytest
import torch
from objective_cases import logprobs_from_ratios

from megatron_qarl.rl.objectives import PolicyLossConfig, compute_policy_loss


@pytest.mark.parametrize("loss", ["grpo", "gspo"])
def test_old_logprobs_passed_live_are_constants(loss):
    """One on-policy mini-batch may pass the logprobs themselves as old and sampler ones:
    ratio 1, and the policy gradient -A / tokens (0 if old carried a gradient too)."""
    lp, _, mask = logprobs_from_ratios([[1.0, 1.0]])
    loss_value = compute_policy_loss(PolicyLossConfig(loss=loss), lp, lp, torch.tensor([1.0]),
                                     mask, lp)[0]
    loss_value.backward()
    torch.testing.assert_close(lp.grad, torch.tensor([[-0.5, -0.5]]))


def test_no_gradient_reaches_the_advantages():
    lp, old, mask = logprobs_from_ratios([[1.1, 0.9]])
    advantages = torch.tensor([1.0], requires_grad=True)
    compute_policy_loss(PolicyLossConfig(loss="grpo"), lp, old, advantages, mask)[0].backward()
    assert advantages.grad is None and lp.grad is not None
