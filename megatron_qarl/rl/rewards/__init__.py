"""Verifiable rewards (--reward): response text and gold answer -> a float. A built-in by name,
or the user's own callable as `module:function`, imported from the Python path."""
import importlib
from math import isfinite  # `math` below is this package's math.py
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


class RewardError(ValueError):
    """A reward function that cannot be loaded, or returned something that is not a reward."""


def get_reward(spec: str) -> RewardFn:
    if spec in REWARDS:
        return REWARDS[spec]
    if ":" not in spec:
        raise RewardError(f"--reward must be one of {', '.join(REWARDS)}, or module:function "
                          f"for your own, got {spec!r}")
    module_name, _, name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise RewardError(f"--reward {spec!r}: cannot import {module_name!r} ({err}); put its "
                          f"folder on PYTHONPATH") from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise RewardError(f"--reward {spec!r}: {module.__file__} defines no callable {name!r}")
    return _checked(fn, spec)


def _checked(fn: Callable, spec: str) -> RewardFn:
    """A user's reward, held to returning one finite number: a float, int or bool, or what
    float() takes for one (a numpy scalar, a one-element tensor), but not text."""
    def reward(response: str, answer: str) -> float:
        value = fn(response, answer)
        try:
            number = float(value) if not isinstance(value, (str, bytes)) else None
        except (TypeError, ValueError, RuntimeError):  # RuntimeError: a multi-element tensor
            number = None
        if number is None or not isfinite(number):
            raise RewardError(f"--reward {spec!r} returned {value!r} for the response "
                              f"{response[:80]!r} (answer {answer!r}); a reward must be one "
                              f"finite number")
        return number
    return reward


__all__ = ["REWARDS", "RewardError", "RewardFn", "get_reward", "last_boxed",
           "arithmetic_reward", "boxed_match_reward", "math_verify_reward"]
