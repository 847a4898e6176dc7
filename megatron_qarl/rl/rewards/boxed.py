"""Boxed-answer extraction: the content of the last \\boxed{...} (or \\fbox{...}), braces
balanced, as math benchmarks grade it."""
from __future__ import annotations

import re
from typing import Optional

#: \\boxed{ or \\fbox{, LaTeX allowing spaces before the brace
BOX_MARKER = re.compile(r"\\(?:boxed|fbox)\s*\{")


def last_boxed(text: str) -> Optional[str]:
    markers = list(BOX_MARKER.finditer(text))
    if not markers:
        return None
    i = markers[-1].end()
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
