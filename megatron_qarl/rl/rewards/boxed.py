"""Boxed-answer extraction: the content of the last \\boxed{...} (or \\fbox{...}), braces
balanced, as math benchmarks grade it."""
from __future__ import annotations

from typing import Optional

BOX_MARKERS = ("\\boxed{", "\\fbox{")


def last_boxed(text: str) -> Optional[str]:
    start = max(text.rfind(m) for m in BOX_MARKERS)
    if start < 0:
        return None
    i = text.index("{", start) + 1
    depth = 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i:j].strip()
    return None  # unbalanced: the response was cut off inside the box


def normalize(answer: str) -> str:
    """Light normalisation for exact matching: spaces, $ and a trailing period."""
    return answer.replace(" ", "").replace("$", "").rstrip(".")


def boxed_match_reward(response: str, answer: str) -> float:
    got = last_boxed(response)
    return float(got is not None and normalize(got) == normalize(answer))
