"""Math answers checked with math-verify (symbolic equivalence, not string match).

The gold answer is parsed as LaTeX/expression; the response's answer is taken from its last
\\boxed{} when there is one (so intermediate numbers cannot match), else from the text. A
response cut off inside its box scores 0: parsed whole, its reasoning's numbers could match.
"""
from __future__ import annotations

from .boxed import BOX_MARKER, last_boxed

# math-verify's timeouts use SIGALRM: call this from the main thread (the trainer does).


def math_verify_reward(response: str, answer: str) -> float:
    from math_verify import parse, verify  # import here: the GPU image may lack it

    boxed = last_boxed(response)
    if boxed is None and BOX_MARKER.search(response):
        return 0.0
    target = f"${boxed}$" if boxed is not None else response
    gold = parse(f"${answer}$")
    pred = parse(target)
    return float(bool(gold) and bool(pred) and verify(gold, pred))
