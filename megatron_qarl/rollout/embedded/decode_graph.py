"""The embedded engine's forward over a window of its KV cache, with the single-token decode
steps of a batch replayed from CUDA graphs.

Why: an eager decode step is host-bound. On an H100, a step of 3 Qwen3-30B-A3B layers kept the
GPU busy 1.6 ms of 15.8 ms (docs/benchmarks_30b_reduced.md); the rest was Python and ~260
kernel launches. A graph replays them with one launch.

What capture needs:
- The same shapes every step (layers/kv_cache.py: positions on the device). Attention reads
  the cache up to the next multiple of `key_bucket` positions past the window, so a batch
  captures a graph for each bucket it reaches, and frees it on leaving the bucket (positions
  only grow). Reading the whole cache at every step made long responses slower than eager
  decoding (4096 tokens, H100: 21 ms a step); keeping every bucket's graph ran out of memory.
- No GPU-to-host read inside the forward. At TP = EP = 1 with the quantized grouped experts
  the token dispatcher keeps its counts on the device and permutes without a sync while
  capturing (layers/token_dispatch.py). Megatron's SequentialMLP (bf16 experts) splits tokens
  on the host, and tensor or expert parallelism exchange host-sized splits: those engines
  decode eagerly, on the same cache (`graph_blocker` says why).
"""
from __future__ import annotations

import contextlib
import functools
from typing import Optional

import torch
from megatron.core import tensor_parallel
from megatron.core.transformer.moe.moe_layer import MoELayer

from ...layers.kv_cache import PositionedKVCache


def graph_blocker(model, device, window_multiple: int, sync_group) -> Optional[str]:
    """None when the decode step can be captured, else the reason it cannot."""
    if torch.device(device).type != "cuda":
        return "the engine is not on a CUDA device"
    if window_multiple != 1 or sync_group is not None:
        return "tensor or expert parallelism exchanges host-sized splits"
    for module in model.modules():
        if (isinstance(module, MoELayer)
                and not getattr(module.token_dispatcher, "counts_stay_on_device", False)):
            return (f"the MoE experts ({type(module.experts).__name__}) split tokens by "
                    f"host-side counts; only quantized grouped experts keep them on the GPU")
    return None


@contextlib.contextmanager
def _identity_rng_forks():
    """Megatron forks its CUDA RNG state around attention dropout, the identity in eval; the
    state copies of a fork cannot be captured."""
    tracker = tensor_parallel.get_cuda_rng_tracker()
    tracker.fork = lambda *args, **kwargs: contextlib.nullcontext()
    try:
        yield
    finally:
        del tracker.fork


#: positions: attention reads the KV cache up to the next multiple of this past the window
KEY_BUCKET = 256


@functools.lru_cache(maxsize=None)
def _side_stream(device: torch.device) -> torch.cuda.Stream:
    """One stream per device for every warm-up and capture: cuBLAS keeps a 32 MiB workspace
    per stream for the life of the process, so a new stream per batch leaked one each."""
    return torch.cuda.Stream(device)


class CachedForward:
    """model(ids at positions start..) -> logits [batch, window, vocab], over a
    PositionedKVCache of `room` positions; with `graph`, single-token windows replay the CUDA
    graph of their key bucket, captured at its first step (the returned logits are then that
    graph's buffer, overwritten by its next replay)."""

    def __init__(self, model, batch: int, room: int, device, graph: bool,
                 key_bucket: int = KEY_BUCKET):
        self.model, self.device, self.use_graph = model, device, graph
        self.room, self.key_bucket = room, key_bucket
        self.cache = PositionedKVCache(batch, room)
        self.key_positions = torch.arange(room, device=device)
        self.graph: Optional[torch.cuda.CUDAGraph] = None
        self.graph_visible = 0  # the key bucket self.graph reads

    def _visible(self, stop: int) -> int:
        return min(self.room, -(-stop // self.key_bucket) * self.key_bucket)

    def _forward(self, ids: torch.Tensor, positions: torch.Tensor, visible: int) -> torch.Tensor:
        self.cache.positions, self.cache.visible = positions, visible
        # True: not attended
        mask = (self.key_positions[:visible] > positions[:, None])[None, None]
        return self.model(ids, positions.expand(ids.shape[0], -1), mask,
                          inference_context=self.cache, runtime_gather_output=True)

    def __call__(self, ids: torch.Tensor, start: int) -> torch.Tensor:
        visible = self._visible(start + ids.shape[1])
        if not self.use_graph or ids.shape[1] != 1:
            positions = torch.arange(start, start + ids.shape[1], device=self.device)
            return self._forward(ids, positions, visible)
        if visible != self.graph_visible:
            self._capture(ids, start, visible)
        self.ids.copy_(ids)
        self.position.fill_(start)
        self.graph.replay()
        return self.logits

    def _capture(self, ids: torch.Tensor, start: int, visible: int) -> None:
        if self.graph is not None:  # the last bucket's graph and its memory go first, once
            torch.cuda.current_stream(self.device).synchronize()  # its replays are done
            self.graph = self.logits = None
        self.ids = ids.clone()
        self.position = torch.full((1,), start, dtype=torch.long, device=self.device)
        # one eager step first (torch's recipe: on the capture's side stream) compiles and
        # tunes the step's kernels; it writes this position's keys, which the replay rewrites
        side = _side_stream(torch.device(self.device))
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            self._forward(self.ids, self.position, visible)
        torch.cuda.current_stream(self.device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with _identity_rng_forks(), torch.cuda.graph(self.graph, stream=side,
                                                     capture_error_mode="thread_local"):
            self.logits = self._forward(self.ids, self.position, visible)
        self.graph_visible = visible


class LaggedAll:
    """`flags.all()` read on the host one step late on CUDA: reading the step just queued would
    make the host wait for it instead of queuing the next one. At most one step runs after the
    last row finished, with every row inactive. On the CPU: no lag."""

    def __init__(self, device):
        self.cuda = torch.device(device).type == "cuda"
        self.pushed = []  # (pinned host copy, event), the last two pushes

    def push(self, flags: torch.Tensor) -> None:
        if not self.cuda:
            self.pushed = [(flags.all(), None)]
            return
        host = torch.empty((), dtype=torch.bool, pin_memory=True)
        host.copy_(flags.all(), non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        self.pushed = self.pushed[-1:] + [(host, event)]

    def read(self) -> bool:
        wanted = 1 if self.cuda else 0  # how many pushes may still be in flight
        if len(self.pushed) <= wanted:
            return False
        host, event = self.pushed[-1 - wanted]
        if event is not None:
            event.synchronize()
        return bool(host)
