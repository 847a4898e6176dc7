"""Reward of the synthetic addition task: the response must be exactly the sum (the tokenizer
drops the eos), so extra text after the number counts as wrong."""
from __future__ import annotations


def arithmetic_reward(response: str, answer: str) -> float:
    return float(response.strip() == answer.strip())
