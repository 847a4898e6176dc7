"""Run Megatron-Core on CPU over gloo, for tests and `--device cpu` runs: process-group set-up
for world size 1 or 2 with TP/EP/expert-TP, the targeted patches megatron-core 0.16.1 needs
off-GPU (each with its reason), and a helper that runs a function in 2 gloo processes.

Only tests and the trainer under --device cpu import this module: it replaces `torch.cuda.*`
entry points in the process. On a machine with a GPU, torch and the project's own GPU code in
the same process keep CUDA (`current_device` is answered by caller, the CUDA streams stay, the
dispatcher's host copies act on CUDA tensors as upstream's), but Megatron's own causal mask and
optimizer buffers go to the CPU (patches 4 and 7): a GPU Megatron model runs in a process that
never imported this module (the GPU tests spawn one).
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import traceback
from typing import Any, Callable, List, Optional

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from .megatron_fixes import apply_megatron_fixes

_PATCHED = False
#: moe_utils.maybe_move_tensor_to_cpu as upstream wrote it (for CUDA tensors), once patched
_UPSTREAM_MOVE_TO_HOST = None


class CpuRNGStatesTracker:
    """Megatron's named-RNG-state tracker on the CPU generator. Attention and weight init
    always `fork()` the tracker, and the CUDA one reads `torch.cuda.get_rng_state()`."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.states_, self.seeds_ = {}, set()
        self._is_initialized = False

    def is_initialized(self):
        return self._is_initialized

    def get_states(self):
        return dict(self.states_)

    def set_states(self, states):
        self._is_initialized = True
        self.states_ = dict(states)

    def add(self, name, seed):
        if seed in self.seeds_ or name in self.states_:
            raise ValueError(f"RNG state {name!r} or seed {seed} already added")
        self._is_initialized = True
        self.seeds_.add(seed)
        self.states_[name] = torch.Generator().manual_seed(seed).get_state()

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        if name not in self.states_:
            raise ValueError(f"RNG state {name!r} was not added")
        outer = torch.get_rng_state()
        torch.set_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = torch.get_rng_state()
            torch.set_rng_state(outer)


class _NoStream:
    """Stand-in for a CUDA stream: the alltoall dispatcher overlaps its device-to-host copy
    of the split sizes on a side stream; on CPU there is nothing to overlap. A class, not a
    function, so annotations such as `torch.cuda.Stream | None` in modules imported later
    (transformers, sglang) still evaluate."""

    def __init__(self, *_args, **_kwargs):
        pass

    def wait_stream(self, _other):
        pass

    def record_event(self):
        return self

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, _NoStream)

    def __hash__(self):
        return 0


def _cpu_for_megatron(real_current_device: Callable[[], int]) -> Callable[[], Any]:
    """`torch.cuda.current_device` that answers "cpu" to Megatron's modules, which allocate on
    it. On a machine with a GPU every other caller keeps the real index: torch itself indexes
    device tables with it (dynamo's Triton check, in the first torch.compile of Megatron's
    router), and a GPU test may share the process."""

    def current_device():
        if not torch.cuda.is_available():
            return "cpu"
        caller = sys._getframe(1).f_globals.get("__name__", "")
        return "cpu" if caller.startswith("megatron.") else real_current_device()
    return current_device


def _cpu_causal_mask(sq: int) -> torch.Tensor:
    return torch.triu(torch.ones(sq, sq, dtype=torch.bool), diagonal=1)


def _move_to_host(tensor, as_numpy: bool = False, record_stream: bool = False):
    """moe_utils.maybe_move_tensor_to_cpu for CPU tensors: there the original returns the
    tensor unchanged even when numpy split sizes were asked for, and the alltoall then fails.
    CUDA tensors take the original."""
    if torch.is_tensor(tensor) and tensor.is_cuda:
        return _UPSTREAM_MOVE_TO_HOST(tensor, as_numpy=as_numpy, record_stream=record_stream)
    if torch.is_tensor(tensor) and as_numpy:
        return tensor.numpy()
    return tensor


_FACTORIES = ("tensor", "zeros", "ones", "empty", "full")


class _CpuTorch:
    """`torch` for modules that create bookkeeping tensors with a hard-coded device='cuda':
    its tensor factories send 'cuda' to the CPU; every other attribute is the real torch."""

    def __getattr__(self, name):
        attr = getattr(torch, name)
        if name not in _FACTORIES:
            return attr

        def on_cpu(*args, device=None, **kwargs):
            if device is not None and torch.device(device).type == "cuda":
                device = "cpu"
            return attr(*args, device=device, **kwargs)
        return on_cpu


@torch.no_grad()
def _clip_grad_by_total_norm_cpu(parameters, max_norm, total_norm, use_decoupled_grad=False):
    """clip_grads.clip_grad_by_total_norm_fp32 asserts grad.type() == 'torch.cuda.FloatTensor';
    this is the same scaling without the device assertion."""
    coeff = max_norm / (total_norm + 1.0e-6)
    if coeff >= 1.0:
        return
    for param in parameters:
        grad = param.decoupled_grad if use_decoupled_grad else param.grad
        if grad is not None:
            grad.mul_(coeff)


def _all_gather_unequal(outputs: List[torch.Tensor], tensor: torch.Tensor, group=None,
                        async_op: bool = False):
    """dist.all_gather where the ranks' tensors may differ in size, as Megatron's layer-wise
    optimizer gathers each rank's updated weights: NCCL accepts that, gloo refuses it
    ("invalid tensor size"). Here every rank sends its flat tensor padded to the largest."""
    import torch.distributed as dist

    if async_op or len({t.numel() for t in outputs}) == 1:
        return dist.all_gather(outputs, tensor, group=group, async_op=async_op)
    width = max(t.numel() for t in outputs)
    padded = [tensor.new_empty(width) for _ in outputs]
    dist.all_gather(padded, torch.nn.functional.pad(tensor.reshape(-1),
                                                    (0, width - tensor.numel())), group=group)
    for out, got in zip(outputs, padded):
        out.copy_(got[:out.numel()].view_as(out))
    return None


class _DistributedWithUnequalAllGather:
    all_gather = staticmethod(_all_gather_unequal)

    def __getattr__(self, name):
        return getattr(torch.distributed, name)


class _TorchWithUnequalAllGather:
    """`torch` as megatron's layer_wise_optimizer module sees it: its all-gather takes
    unequal shards (`_all_gather_unequal`)."""
    distributed = _DistributedWithUnequalAllGather()

    def __getattr__(self, name):
        return getattr(torch, name)


def patch_megatron_for_cpu() -> None:
    """Apply every CPU patch once per process (docs/megatron_layers.md, "CPU test support")."""
    global _PATCHED
    if _PATCHED:
        return
    from megatron.core import utils
    from megatron.core.fusions import fused_softmax
    from megatron.core.optimizer import clip_grads, layer_wise_optimizer, optimizer
    from megatron.core.tensor_parallel import random as mp_random
    from megatron.core.transformer import utils as transformer_utils
    from megatron.core.transformer.moe import moe_utils, token_dispatcher

    # 1. rotary embedding, router and attention allocate on torch.cuda.current_device().
    torch.cuda.current_device = _cpu_for_megatron(torch.cuda.current_device)
    # 2. attention and initialisation fork the CUDA RNG tracker.
    mp_random._CUDA_RNG_STATE_TRACKER = CpuRNGStatesTracker()
    mp_random._CUDA_RNG_STATE_TRACKER_INITIALIZED = True
    # 3. the te_general_gemm NameError (not CPU specific).
    apply_megatron_fixes()
    # 4. the default causal mask is built with device="cuda"; both importers hold the name.
    transformer_utils.get_default_causal_mask = _cpu_causal_mask
    fused_softmax.get_default_causal_mask = _cpu_causal_mask
    # 5. (TP>1 norms under sequence parallelism) is compat.TorchNorm, used by the model specs.
    # 6. the alltoall dispatcher's host copies of split sizes, and its side stream, which
    #    needs a stand-in only where there is no CUDA (with a GPU the real streams work, and
    #    torch's own users of them stay intact).
    global _UPSTREAM_MOVE_TO_HOST
    _UPSTREAM_MOVE_TO_HOST = moe_utils.maybe_move_tensor_to_cpu
    moe_utils.maybe_move_tensor_to_cpu = _move_to_host
    token_dispatcher.maybe_move_tensor_to_cpu = _move_to_host
    if not torch.cuda.is_available():
        stream = _NoStream()
        torch.cuda.Stream = _NoStream
        torch.cuda.current_stream = lambda *a, **k: stream
        torch.cuda.stream = lambda _s: contextlib.nullcontext()
        # Saving a distributed checkpoint synchronises the device.
        torch.cuda.synchronize = lambda *a, **k: None
    # 7. the FP32 optimizer, grad clipping and the local multi-tensor l2 norm create their
    #    loss-scale and grad-norm buffers with device='cuda', and clipping asserts CUDA grads.
    optimizer.torch = clip_grads.torch = utils.torch = _CpuTorch()
    optimizer.clip_grad_by_total_norm_fp32 = _clip_grad_by_total_norm_cpu
    # 8. Muon's layer-wise distributed optimizer all-gathers unequal shards, which gloo refuses.
    layer_wise_optimizer.torch = _TorchWithUnequalAllGather()
    _PATCHED = True


def init_parallel(tp: int = 1, ep: int = 1, etp: Optional[int] = None, seed: int = 1234) -> None:
    """(Re)initialise Megatron's parallel state for this process on CPU.

    The default process group (gloo) must exist when world size > 1 (see `run_distributed`);
    for a single process one is created on an in-memory store, and made anew each call: Megatron's
    destroy_model_parallel drops most of its groups without destroying them, and each gloo group
    left behind keeps its threads polling (40 calls left 2055 threads using a core while idle;
    a test session makes dozens of calls).
    """
    from megatron.core import parallel_state, tensor_parallel

    patch_megatron_for_cpu()
    _drop_megatrons_references_to_groups()
    if dist.is_initialized() and dist.get_world_size() == 1:
        parallel_state.destroy_model_parallel()
        dist.destroy_process_group()  # every group, the default one included
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    parallel_state.destroy_model_parallel()
    parallel_state.initialize_model_parallel(
        tensor_model_parallel_size=tp, expert_model_parallel_size=ep,
        expert_tensor_parallel_size=etp,
    )
    tensor_parallel.model_parallel_cuda_manual_seed(seed)
    torch.manual_seed(seed)


def _drop_megatrons_references_to_groups() -> None:
    """A destroyed gloo group's threads (and the default store's) live on while Python holds
    it: Megatron's rotary embedding caches its forward per module (an lru_cache that holds
    `self`, so every model's context-parallel group), and its MoE loss tracker keeps the last
    reduce group. One model trained per init_parallel left a group behind each time (4 threads
    a test, up to 32 groups: tests/megatron/test_megatron_fixes.py)."""
    from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding
    from megatron.core.transformer.moe import moe_utils

    RotaryEmbedding.forward.cache_clear()
    moe_utils.get_moe_layer_wise_logging_tracker().clear()


def _worker(rank: int, world_size: int, init_file: str, fn: Callable, args: tuple,
            results: list) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world_size)
    try:
        results[rank] = ("ok", fn(rank, world_size, *args))
    except BaseException:  # noqa: BLE001 - the parent re-raises with this traceback
        results[rank] = ("error", traceback.format_exc())
    finally:
        dist.destroy_process_group()


def run_distributed(fn: Callable[..., Any], world_size: int = 2, *args) -> List[Any]:
    """Run `fn(rank, world_size, *args)` in `world_size` spawned gloo processes and return
    their results by rank; a failure in any rank raises here with that rank's traceback.
    `fn` must be importable (module level) and its results picklable."""
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager, tempfile.TemporaryDirectory() as tmp:
        results = manager.list([None] * world_size)
        init_file = os.path.join(tmp, "gloo_init")
        mp.start_processes(_worker, args=(world_size, init_file, fn, args, results),
                           nprocs=world_size, join=True, start_method="spawn")
        out = list(results)
    for rank, (status, value) in enumerate(out):
        if status == "error":
            raise RuntimeError(f"rank {rank} of {world_size} failed:\n{value}")
    return [value for _status, value in out]
