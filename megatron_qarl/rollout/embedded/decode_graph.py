"""The embedded engine's forward over a window of its KV cache, with the decode steps of a
batch replayed from CUDA graphs.

Why: an eager decode step is host-bound. On an H100, a step of 3 Qwen3-30B-A3B layers kept the
GPU busy 1.6 ms of 15.8 ms (docs/benchmarks_30b_reduced.md); the rest was Python and ~260
kernel launches. A graph replays them with one launch.

What capture needs:
- The same shapes every step (layers/kv_cache.py: positions on the device). Attention reads
  the cache up to the next multiple of `key_bucket` positions past the window, so a batch
  captures a graph for each bucket it reaches, and frees it on leaving the bucket (positions
  only grow). Reading the whole cache at every step made long responses slower than eager
  decoding (4096 tokens, H100: 21 ms a step); keeping every bucket's graph ran out of memory.
- No GPU-to-host read inside the forward. The token dispatcher keeps its counts on the device
  for the quantized grouped experts: at TP = EP = 1 it permutes without a sync while capturing
  (layers/token_dispatch.py); under tensor or expert parallelism the decode steps exchange
  tokens in fixed sizes (layers/fixed_size_dispatch.py). Megatron's SequentialMLP (bf16
  experts without --moe-grouped-gemm) splits tokens on the host: those engines decode eagerly,
  on the same cache (`graph_blocker` says why).
- Under parallelism, every rank issuing the same collectives in the same order, while ranks
  enter key buckets at different steps: every step runs one forward's collectives, eager (the
  first bucket's first step, the warm-up before its capture) or replayed (a capture runs
  nothing and is replayed at once).
"""
from __future__ import annotations

import contextlib
import functools
from typing import Optional

import torch
import torch.distributed as dist
from megatron.core import tensor_parallel
from megatron.core.transformer.module import Float16Module
from megatron.core.transformer.moe.moe_layer import MoELayer

from ...layers.fixed_size_dispatch import exchanges_tokens, fixed_size_exchange
from ...layers.kv_cache import PositionedKVCache
from ...quant import ops


def graph_blocker(model, device) -> Optional[str]:
    """None when the decode step can be captured, else the reason it cannot."""
    if torch.device(device).type != "cuda":
        return "the engine is not on a CUDA device"
    for module in model.modules():
        if not isinstance(module, MoELayer):
            continue
        if not getattr(module.token_dispatcher, "counts_stay_on_device", False):
            return (f"the MoE experts ({type(module.experts).__name__}) split tokens by "
                    f"host-side counts; only grouped experts keep them on the GPU (quantized "
                    f"ones, or bf16 ones with --moe-grouped-gemm)")
        scheme = getattr(module.experts, "scheme", None)
        if scheme is not None and ops.grouped_reads_counts_on_host(scheme, "cuda"):
            return (f"the {type(scheme).__name__} experts run TransformerEngine's grouped "
                    f"GEMM, which takes the tokens per expert as a host-side list")
        if module.config.moe_expert_capacity_factor is not None:
            return ("token dropping (the model config's moe_expert_capacity_factor) leaves a "
                    "number of routed rows the host must read")
        if exchanges_tokens(module) and module.shared_expert_overlap:
            return ("shared experts overlapped with the token exchange (the model config's "
                    "moe_shared_expert_overlap)")
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


def logits_in_model_dtype(model) -> dict:
    """Keyword arguments for a model call that keep its logits in the model's dtype.
    Megatron's Float16Module (--bf16) upcasts them to fp32: a [tokens, vocab] copy of 4 bytes
    an entry, and a second one as its gradient. The sampler and the learner cast rows to fp32
    themselves, exactly, so bf16 logits give them the same logprobs and gradient bits. Both
    must call the model alike: the token-logprob kernels compile one binary per dtype."""
    module = model
    while isinstance(module, torch.nn.Module):
        if isinstance(module, Float16Module):
            return {"fp32_output": False}
        module = getattr(module, "module", None)
    return {}


class CachedForward:
    """model(ids at positions start..) -> logits [batch, window, vocab] (with last_only
    [batch, 1, vocab], and under sequence parallelism [batch, tp, vocab]: each rank's last
    position, gathered; the window's last is the last column), over a PositionedKVCache of
    `room` positions; with `graph`, the decode steps (every window after the first, at start 0)
    replay the CUDA graph of their key bucket, captured at the first bucket's second step and
    at each later bucket's first (the returned logits are then that graph's buffer, overwritten
    by its next replay)."""

    def __init__(self, model, batch: int, room: int, device, graph: bool,
                 key_bucket: int = KEY_BUCKET):
        self.model, self.device, self.use_graph = model, device, graph
        self.room, self.key_bucket = room, key_bucket
        self.cache = PositionedKVCache(batch, room)
        self.key_positions = torch.arange(room, device=device)
        self.graph: Optional[torch.cuda.CUDAGraph] = None
        self.graph_visible = 0  # the key bucket self.graph reads
        self.graph_last_only: Optional[bool] = None  # the logits the decode graphs make

    def _visible(self, stop: int) -> int:
        return min(self.room, -(-stop // self.key_bucket) * self.key_bucket)

    def _forward(self, ids: torch.Tensor, positions: torch.Tensor, visible: int,
                 last_only: bool) -> torch.Tensor:
        self.cache.positions, self.cache.visible = positions, visible
        self.cache.materialize_only_last_token_logits = last_only
        # True: not attended
        mask = (self.key_positions[:visible] > positions[:, None])[None, None]
        return self.model(ids, positions.expand(ids.shape[0], -1), mask,
                          inference_context=self.cache, runtime_gather_output=True,
                          **logits_in_model_dtype(self.model))

    def __call__(self, ids: torch.Tensor, start: int, last_only: bool = False) -> torch.Tensor:
        """last_only: the window's last position's logits only (it must be a real one)."""
        visible = self._visible(start + ids.shape[1])
        if not self.use_graph or start == 0:
            positions = torch.arange(start, start + ids.shape[1], device=self.device)
            return self._forward(ids, positions, visible, last_only)
        if self.graph_last_only is None:
            self.graph_last_only = last_only
        elif last_only != self.graph_last_only:
            raise ValueError(f"CachedForward: the decode graphs make last_only="
                             f"{self.graph_last_only} logits; this step asked for {last_only}")
        if visible != self.graph_visible:
            return self._enter_bucket(ids, start, visible)
        return self._replay(ids, start)

    def _enter_bucket(self, ids: torch.Tensor, start: int, visible: int) -> torch.Tensor:
        """The batch's first key bucket starts with an eager step: the warm-up torch's recipe
        runs before a capture (on the capture's side stream; it compiles and tunes the step's
        kernels), and, under parallelism, this step's collectives. The next step captures.
        A later bucket changes only attention's key count, which needs no warm-up: it captures
        at once (an eager step of 3 Qwen3-30B-A3B layers took 17 ms on an H100, the capture
        21 ms). A new batch still warms up: the weights may have changed since the last, and
        what kernels build from them on first use (the Hopper W4A16 kernel's lane-order codes)
        must not be allocated inside a capture, in memory the graph's pool takes back."""
        if self.graph is not None:  # the last bucket's graph and its memory go first, once
            torch.cuda.current_stream(self.device).synchronize()  # its replays are done
            self.graph = self.logits = None
            self.graph_visible = visible
            return self._replay(ids, start)
        self.graph_visible = visible
        side = _side_stream(torch.device(self.device))
        side.wait_stream(torch.cuda.current_stream(self.device))
        with fixed_size_exchange(self.model), torch.cuda.stream(side):
            positions = torch.arange(start, start + ids.shape[1], device=self.device)
            logits = self._forward(ids, positions, visible, self.graph_last_only)
        torch.cuda.current_stream(self.device).wait_stream(side)
        return logits

    def _replay(self, ids: torch.Tensor, start: int) -> torch.Tensor:
        if self.graph is None:
            self._capture(ids)
        self.ids.copy_(ids)
        self.start.fill_(start)
        self.graph.replay()
        return self.logits

    def _capture(self, ids: torch.Tensor) -> None:
        """Record the step (running nothing); its first replay is this step's result, so that
        every step, capturing or not, runs one forward's collectives."""
        # the graph's inputs: they must outlive it (a replay reads their memory)
        self.ids = torch.empty_like(ids)
        self.start = torch.zeros(1, dtype=torch.long, device=self.device)
        self.offsets = torch.arange(ids.shape[1], device=self.device)
        side = _side_stream(torch.device(self.device))
        self.graph = torch.cuda.CUDAGraph()
        with fixed_size_exchange(self.model), _identity_rng_forks(), torch.cuda.graph(
                self.graph, stream=side, capture_error_mode="thread_local"):
            self.logits = self._forward(self.ids, self.start + self.offsets, self.graph_visible,
                                        self.graph_last_only)


class LaggedAll:
    """`flags.all()` over this rank's rows and those of `group`'s ranks (None: this rank's),
    read on the host one step late on CUDA: reading the step just queued would make the host
    wait for it instead of queuing the next one. At most one step runs after the last row
    finished, with every row inactive. On the CPU: no lag. Every rank of `group` reads the
    same value at the same step, so they stop together."""

    def __init__(self, device, group=None):
        self.cuda = torch.device(device).type == "cuda"
        self.group = group
        self.pushed = []  # (pinned host copy, event), the last two pushes

    def push(self, flags: torch.Tensor) -> None:
        done = flags.all()
        if self.group is not None:
            done = done.to(torch.int32)
            dist.all_reduce(done, op=dist.ReduceOp.MIN, group=self.group)
        if not self.cuda:
            self.pushed = [(done, None)]
            return
        host = torch.empty((), dtype=done.dtype, pin_memory=True)
        host.copy_(done, non_blocking=True)
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
