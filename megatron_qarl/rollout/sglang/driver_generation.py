"""Generation from every trainer rank through the driver: SGLangRolloutEngine speaks to the
servers from global rank 0 only, while each data-parallel rank samples its own prompts. The
prompts are gathered on rank 0, generated in one call (spread over the engines there) and
each rank gets its own groups back. The ranks of one data-parallel replica (TP / expert
peers) send the same prompts and must train on the same samples, so the driver generates
once per data-parallel rank."""
from __future__ import annotations

from typing import List

import torch
import torch.distributed as dist

from ..base import RolloutEngine, Sample, SamplingParams
from .errors import SGLangError


class DriverGeneration(RolloutEngine):
    def __init__(self, engine: RolloutEngine, dp_rank: int):
        self.engine, self.dp_rank = engine, dp_rank

    @property
    def weight_version(self) -> int:
        return self.engine.weight_version

    def generate(self, prompts: List[List[int]], params: SamplingParams) -> List[List[Sample]]:
        if not dist.is_initialized() or dist.get_world_size() == 1:
            return self.engine.generate(prompts, params)
        driver = dist.get_rank() == 0
        sent = [None] * dist.get_world_size() if driver else None
        dist.gather_object((self.dp_rank, prompts), sent, dst=0)
        answers, error = None, None
        if driver:
            try:
                answers = self._generate_for(sent, params)
            except Exception as e:  # noqa: BLE001 - every rank must leave the scatter
                error = e
                answers = [("error", f"{type(e).__name__}: {e}")] * len(sent)
        received = [None]
        dist.scatter_object_list(received, answers, src=0)
        if error is not None:
            raise error
        status, value = received[0]
        if status == "error":
            raise SGLangError(f"generation on the driver (rank 0) failed: {value}")
        return value

    def _generate_for(self, sent, params: SamplingParams) -> list:
        """sent: (dp_rank, prompts) per global rank -> ("ok", groups) per global rank."""
        by_dp = {}
        for rank, (dp, prompts) in enumerate(sent):
            if by_dp.setdefault(dp, prompts) != prompts:
                raise SGLangError(f"rank {rank} of data-parallel rank {dp} sent other prompts "
                                  f"than its replica peers; they must sample the same batch")
        flat = [p for prompts in by_dp.values() for p in prompts]
        groups = self.engine.generate(flat, params)
        start, per_dp = 0, {}
        for dp, prompts in by_dp.items():
            per_dp[dp] = groups[start:start + len(prompts)]
            start += len(prompts)
        return [("ok", per_dp[dp]) for dp, _ in sent]

    def publish_weights(self, model: torch.nn.Module, version: int) -> None:
        self.engine.publish_weights(model, version)

    def release_memory(self) -> None:
        self.engine.release_memory()

    def resume_memory(self) -> None:
        self.engine.resume_memory()

    def shutdown(self) -> None:
        self.engine.shutdown()
