"""RL side of QaRL: objectives, advantages and diagnostics (objectives/), later the loop."""
from .objectives import (
    PolicyLossConfig,
    add_policy_loss_args,
    compute_policy_loss,
    group_normalized_advantages,
    local_normalizer,
)

__all__ = [
    "PolicyLossConfig", "add_policy_loss_args", "compute_policy_loss",
    "group_normalized_advantages", "local_normalizer",
]
