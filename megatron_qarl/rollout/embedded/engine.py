"""The embedded rollout engine: generation in the training process, on a Megatron GPTModel.

Same scheme as the learner (QaRL, or bf16 on both sides): the engine decodes with the
learner's own model object, so it reads the quantized weights the learner caches for the
current optimizer step and publishing copies nothing. Different schemes ("quantized rollout,
bf16 learner"): the engine keeps its own model built with the rollout scheme, and publishing
copies the learner's master weights into it, after which that model quantizes them exactly
as a serving engine loading the published checkpoint would.
"""
from __future__ import annotations

import logging
from typing import Callable, List, Optional

import torch
from megatron.core.utils import unwrap_model

from ..base import RolloutEngine, Sample, SamplingParams, require_tokens
from .decode_graph import graph_blocker
from .generate import agree, eval_mode, generate_batch

log = logging.getLogger(__name__)


class EmbeddedEngine(RolloutEngine):
    def __init__(self, model: torch.nn.Module, *, pad_id: int, max_batch: int, seed: int,
                 device, on_weights_loaded: Optional[Callable[[torch.nn.Module], None]] = None,
                 window_multiple: int = 1, sync_group=None, record_routes: bool = False,
                 cuda_graph: bool = True):
        """model: the learner's model (shared) or the engine's own copy (separate scheme).
        on_weights_loaded(model) refreshes the copy's quantized cache after publishing;
        window_multiple: the TP size under sequence parallelism; sync_group: the ranks that
        decode in lockstep under expert parallelism (see generate.py); record_routes: each
        sample carries the experts it was routed to, for routing replay (the model must be
        built with moe_enable_routing_replay); cuda_graph: replay decode steps from a CUDA
        graph where the model allows it (decode_graph.graph_blocker), else decode eagerly."""
        self.model = unwrap_model(model)
        self.pad_id, self.max_batch, self.device = pad_id, max_batch, device
        self.on_weights_loaded, self.window_multiple = on_weights_loaded, window_multiple
        self.sync_group, self.record_routes = sync_group, record_routes
        self.generator = torch.Generator(device=device).manual_seed(seed)
        blocker = graph_blocker(self.model, device)
        self.cuda_graph = cuda_graph and blocker is None
        if cuda_graph and torch.device(device).type == "cuda":
            log.info("embedded engine: decode steps %s", "replay a CUDA graph" if blocker is None
                     else f"run eagerly ({blocker})")

    def generate(self, prompts: List[List[int]], params: SamplingParams) -> List[List[Sample]]:
        require_tokens(prompts)
        rows = [p for p in prompts for _ in range(params.n)]
        with eval_mode(self.model):
            samples: List[Sample] = []
            batches = -(-len(rows) // self.max_batch)
            if self.sync_group is not None:  # a rank with fewer joins the busiest's batches
                [batches] = agree([batches], self.sync_group, self.device)
            for start in range(0, batches * self.max_batch, self.max_batch):
                samples += generate_batch(self.model, rows[start:start + self.max_batch],
                                          params, self.pad_id, self.generator, self.device,
                                          self.window_multiple, self.sync_group,
                                          self.record_routes, self.cuda_graph)
        for s in samples:
            s.weight_version = self.weight_version
        return [samples[i * params.n:(i + 1) * params.n] for i in range(len(prompts))]

    @torch.no_grad()
    def publish_weights(self, model: torch.nn.Module, version: int) -> None:
        source = unwrap_model(model)
        if source is not self.model:
            mine = dict(self.model.named_parameters())
            for name, param in source.named_parameters():
                if name not in mine:
                    raise RuntimeError(
                        f"publish_weights: the rollout model has no parameter {name!r}; the "
                        f"learner and rollout models must be built from the same config"
                    )
                mine[name].copy_(param)
            if self.on_weights_loaded is not None:
                self.on_weights_loaded(self.model)
        self.weight_version = version

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state(), "weight_version": self.weight_version}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self.weight_version = state["weight_version"]
