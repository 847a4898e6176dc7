"""The order prompts are drawn in: a seeded permutation per epoch, so the position (epoch,
index) is the whole state and a resumed run draws the same next batch."""
from __future__ import annotations

from typing import Dict, List

import torch

from .datasets import DatasetError


class PromptOrder:
    def __init__(self, num_rows: int, seed: int):
        self.num_rows, self.seed = num_rows, seed
        self.epoch, self.index = 0, 0

    def _permutation(self) -> List[int]:
        gen = torch.Generator().manual_seed(self.seed + self.epoch)
        return torch.randperm(self.num_rows, generator=gen).tolist()

    def next_indices(self, count: int) -> List[int]:
        out = []
        while len(out) < count:
            if self.index == self.num_rows:
                self.epoch, self.index = self.epoch + 1, 0
            perm = self._permutation()
            take = min(count - len(out), self.num_rows - self.index)
            out.extend(perm[self.index:self.index + take])
            self.index += take
        return out

    def state_dict(self) -> Dict[str, int]:
        return {"epoch": self.epoch, "index": self.index, "num_rows": self.num_rows,
                "seed": self.seed}

    def load_state_dict(self, state: Dict[str, int]) -> None:
        if state["num_rows"] != self.num_rows or state["seed"] != self.seed:
            raise DatasetError(
                f"the checkpoint's data order has {state['num_rows']} rows and seed "
                f"{state['seed']}, this run {self.num_rows} and {self.seed}; resume with the "
                f"same --prompt-data and --seed (and the flags that select its rows: "
                f"--synthetic-num-prompts, --seq-length, --skip-long-prompts), or start a new "
                f"--save directory"
            )
        self.epoch, self.index = state["epoch"], state["index"]
