"""The synthetic verifiable task of the tiny example: multi-digit addition "a+b=" -> "c".

Deterministic per seed, so the train and eval splits never change between runs, and small
enough that a randomly initialised tiny model learns it in minutes on a CPU.
"""
from __future__ import annotations

import argparse
import json
import random
from typing import Dict, List

SYNTHETIC_PREFIX = "synthetic:"
TASKS = ("arithmetic",)


def arithmetic_rows(num_rows: int, digits: int, seed: int) -> List[Dict[str, str]]:
    """Rows {"prompt": "37+85=", "answer": "122"}; operands have 1..digits digits."""
    if digits < 1:
        raise ValueError(f"--synthetic-digits must be >= 1, got {digits}")
    rng = random.Random(seed)
    rows = []
    for _ in range(num_rows):
        a = rng.randint(0, 10**digits - 1)
        b = rng.randint(0, 10**digits - 1)
        rows.append({"prompt": f"{a}+{b}=", "answer": str(a + b)})
    return rows


def main() -> None:
    """Write the task as jsonl, to show the file format or to train from a fixed file."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--num-rows", type=int, default=1000)
    parser.add_argument("--digits", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    with open(args.out, "w") as f:
        for row in arithmetic_rows(args.num_rows, args.digits, args.seed):
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
