"""Verifiable rewards by name (--reward): response text and gold answer -> float in [0, 1]."""
from typing import Callable, Dict

from .arithmetic import arithmetic_reward
from .boxed import boxed_match_reward, last_boxed
from .math import math_verify_reward

RewardFn = Callable[[str, str], float]
REWARDS: Dict[str, RewardFn] = {
    "arithmetic": arithmetic_reward,
    "boxed": boxed_match_reward,
    "math-verify": math_verify_reward,
}


def get_reward(name: str) -> RewardFn:
    if name not in REWARDS:
        raise ValueError(f"--reward must be one of {', '.join(REWARDS)}, got {name!r}")
    return REWARDS[name]


__all__ = ["REWARDS", "RewardFn", "get_reward", "last_boxed", "arithmetic_reward",
           "boxed_match_reward", "math_verify_reward"]
