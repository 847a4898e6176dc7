"""The megatron-core 0.16.1 patches of megatron_qarl.compat behave like the code they patch."""
import gc
import inspect
import os
import time
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from megatron.core.transformer.moe import moe_utils, token_dispatcher

from megatron_qarl.compat import TorchNorm, megatron_fixes
from megatron_qarl.compat.cpu_testing import init_parallel

from tiny_qwen3 import build_tiny, train_losses


class OnCuda(torch.Tensor):
    """A CPU tensor that says it is on a GPU."""

    @property
    def is_cuda(self):
        return True


def test_identity_chunk_sort_is_skipped_and_other_sorts_are_unchanged():
    megatron_fixes.apply_megatron_fixes()
    megatron_fixes.apply_megatron_fixes()  # idempotent: wrapped once (each build applies it)
    sort = token_dispatcher.sort_chunks_by_idxs
    assert sort.skips_identity and sort is not moe_utils.sort_chunks_by_idxs
    assert inspect.getclosurevars(sort).nonlocals["sort_chunks_by_idxs"] \
        is moe_utils.sort_chunks_by_idxs
    x, probs = torch.randn(10, 4), torch.rand(10)
    sizes = torch.tensor([3, 0, 5, 2])
    identity = torch.arange(4)
    out, out_probs = sort(x, sizes, identity, probs=probs)
    assert out is x and out_probs is probs  # TP x EP = 1: no split, no copy
    for order in (torch.tensor([2, 0, 3, 1]), torch.tensor([0, 3, 2, 1])):
        got, got_probs = sort(x, sizes, order, probs=probs)
        want, want_probs = moe_utils.sort_chunks_by_idxs(x, sizes, order, probs=probs)
        assert torch.equal(got, want) and torch.equal(got_probs, want_probs)
        assert not torch.equal(got, x)


def test_an_index_on_the_gpu_takes_upstreams_sort():
    """The identity is a CPU arange: torch.equal with a CUDA index raises (two devices)."""
    calls = []
    sort = megatron_fixes._skip_identity_sort(lambda *args, **_: calls.append(args) or "sorted")
    x, sizes = torch.randn(10, 4), torch.tensor([3, 0, 5, 2])
    assert sort(x, sizes, torch.arange(4).as_subclass(OnCuda)) == "sorted" and len(calls) == 1


def test_build_model_applies_the_fixes_itself(single_process, monkeypatch):
    """A GPU run never imports cpu_testing, whose set-up also applies them: without the
    builder's own call every MoE router forward raised NameError there."""
    monkeypatch.delattr(moe_utils, "te_general_gemm")
    monkeypatch.setattr(token_dispatcher, "sort_chunks_by_idxs", moe_utils.sort_chunks_by_idxs)
    build_tiny("none")
    assert moe_utils.te_general_gemm is None and token_dispatcher.sort_chunks_by_idxs.skips_identity


def test_megatron_gets_the_cpu_and_torch_keeps_its_gpu(monkeypatch):
    """On a machine with a GPU, a --device cpu run or a CPU test must not hand "cpu" to
    torch's own callers of current_device: dynamo's Triton check indexes a device list with it
    (the first torch.compile of Megatron's router failed so on an H100)."""
    from megatron_qarl.compat.cpu_testing import _cpu_for_megatron

    current_device = _cpu_for_megatron(lambda: 3)
    ask_from = {}
    for module in ("megatron.core.transformer.moe.router", "torch.utils._triton",
                   "megatron_qarl.layers.linear"):
        scope = {"__name__": module, "current_device": current_device}
        exec("def ask():\n    return current_device()", scope)
        ask_from[module] = scope["ask"]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert ask_from["megatron.core.transformer.moe.router"]() == "cpu"
    assert ask_from["torch.utils._triton"]() == ask_from["megatron_qarl.layers.linear"]() == 3
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert ask_from["torch.utils._triton"]() == "cpu"  # no CUDA: everyone allocates on the CPU


def test_the_cpu_rng_tracker_forks_its_own_stream_and_leaves_torchs_as_it_was():
    """Megatron forks the tracker around initialisation and attention; torch's default stream
    must go on as if there were no fork (it left it on the model-parallel seed's stream)."""
    from megatron_qarl.compat.cpu_testing import CpuRNGStatesTracker

    tracker = CpuRNGStatesTracker()
    tracker.add("model-parallel-rng", 7)
    torch.manual_seed(0)
    unforked = torch.rand(3)
    torch.manual_seed(0)
    forked = []
    for _ in range(2):
        with tracker.fork():
            forked.append(torch.rand(2))
    assert torch.equal(torch.rand(3), unforked)
    # the named stream goes on from where the last fork left it
    assert torch.equal(torch.cat(forked), torch.rand(4, generator=torch.Generator().manual_seed(7)))
    with pytest.raises(ValueError, match="already added"):
        tracker.add("another", 7)
    with pytest.raises(ValueError, match="was not added"):
        with tracker.fork("another"):
            pass


def _communication_threads(settle_to: int | None = None) -> int:
    """gloo's and the TCP store's threads in this process; with settle_to, given up to 5 s to
    fall to it (a freed group's threads may still be ending). Counted after a collection: a
    group in a reference cycle is freed by the next one, not leaked (on the H200 the count after
    three calls was once 3 over, in a worker whose earlier tests had run models)."""
    deadline = time.monotonic() + 5
    while True:
        gc.collect()
        count = _count_communication_threads()
        if settle_to is None or count <= settle_to or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


def _count_communication_threads() -> int:
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            names.append(open(f"/proc/self/task/{task}/comm").read())
        except OSError:  # ended meanwhile
            pass
    return sum(name.startswith(("pt_gloo", "gloo_", "pt_tcpstore")) for name in names)


def test_init_parallel_again_leaves_no_process_groups_behind():
    """Megatron's destroy_model_parallel drops its groups without destroying them; a single
    process's init_parallel destroys them itself, or each call would leave about 50 polling
    gloo threads (40 calls: 2055 threads busy a core, the CPU test session 3x slower). Counted
    after a first call: what earlier tests' models still hold may go, not come."""
    init_parallel(tp=1, ep=1)
    threads = _communication_threads()
    for _ in range(3):
        init_parallel(tp=1, ep=1)
    assert _communication_threads(settle_to=threads) <= threads


def test_a_trained_model_leaves_no_process_groups_behind():
    """Megatron's rotary embedding caches its forward with `self` (and so its group) and its
    MoE loss tracker keeps a reduce group: without init_parallel dropping both, each model
    trained between two calls left a gloo group and a TCP store behind (4 threads a model).
    Counted after a first model (on the H200, after other tests' models, one more group
    survived the first call: docs/results/fp8_grouped_l2_h200_2026-11-30, call 9)."""

    def train_one(scheme):
        model = build_tiny(scheme)
        train_losses(model, torch.optim.Adam(model.parameters(), lr=1e-3), 1)
        init_parallel(tp=1, ep=1)

    init_parallel(tp=1, ep=1)
    train_one("none")
    threads = _communication_threads()
    for scheme in ("w4a16", "none", "fp8-block"):
        train_one(scheme)
        assert _communication_threads(settle_to=threads) <= threads, scheme


def test_the_dispatchers_host_copy_is_upstreams_for_cuda_tensors(monkeypatch):
    """The CPU stand-in returned CUDA split sizes as they were (and called .numpy() on them when
    numpy was asked for) where upstream copies them to the host."""
    from megatron_qarl.compat import cpu_testing

    init_parallel(tp=1, ep=1)  # patches applied
    calls = []
    monkeypatch.setattr(cpu_testing, "_UPSTREAM_MOVE_TO_HOST",
                        lambda t, **kw: calls.append(kw) or "upstream")

    sizes = torch.tensor([3, 1])
    assert token_dispatcher.maybe_move_tensor_to_cpu(sizes.as_subclass(OnCuda),
                                                     as_numpy=True) == "upstream"
    assert calls == [{"as_numpy": True, "record_stream": False}]
    on_host = token_dispatcher.maybe_move_tensor_to_cpu(sizes, as_numpy=True)
    assert isinstance(on_host, np.ndarray) and on_host.tolist() == [3, 1]  # gloo's split sizes
    assert token_dispatcher.maybe_move_tensor_to_cpu(sizes) is sizes


@pytest.mark.parametrize("total_norm, scale", [(4.0, 0.25), (1.0, 1.0), (0.5, 1.0)])
@pytest.mark.parametrize("decoupled", [False, True])
def test_the_cpu_grad_clipping_scales_by_max_norm_over_the_total(total_norm, scale, decoupled):
    """Megatron's own asserts CUDA grads; the stand-in must still clip (max_norm 1)."""
    from megatron_qarl.compat.cpu_testing import _clip_grad_by_total_norm_cpu

    params = [torch.nn.Parameter(torch.ones(3)) for _ in range(2)]
    for p in params:
        setattr(p, "decoupled_grad" if decoupled else "grad", torch.full((3,), 2.0))
    _clip_grad_by_total_norm_cpu(params, 1.0, total_norm, use_decoupled_grad=decoupled)
    for p in params:
        grad = p.decoupled_grad if decoupled else p.grad
        torch.testing.assert_close(grad, torch.full((3,), 2.0 * scale), rtol=1e-5, atol=0)


def _norm_config(**fields):
    return SimpleNamespace(**{"normalization": "RMSNorm", "layernorm_zero_centered_gamma": False,
                              "use_cpu_initialization": True, "params_dtype": torch.float32,
                              "sequence_parallel": False, **fields})


@pytest.mark.parametrize("fields, message", [
    # Megatron's WrappedTorchNorm asserts it; TorchNorm dropped that check with the sequence
    # parallel one, and a config asking for x/rms * (1 + w) got x/rms * w
    ({"layernorm_zero_centered_gamma": True}, r"layernorm_zero_centered_gamma: .* not 1 \+ w"),
    ({"normalization": "L2Norm"}, r"'L2Norm' is not supported .*--normalization RMSNorm or"),
])
def test_the_torch_norm_refuses_what_it_does_not_compute(fields, message):
    with pytest.raises(ValueError, match=message):
        TorchNorm(config=_norm_config(**fields), hidden_size=8)


@pytest.mark.parametrize("normalization, module", [("RMSNorm", torch.nn.RMSNorm),
                                                   ("LayerNorm", torch.nn.LayerNorm)])
@pytest.mark.parametrize("sequence_parallel", [False, True])
def test_the_torch_norm_is_the_configs_with_its_weights_marked_for_sequence_parallel(
        normalization, module, sequence_parallel):
    """finalize_model_grads sums a `sequence_parallel` weight's gradient over the TP ranks, each
    of which saw only its slice of the tokens."""
    norm = TorchNorm(config=_norm_config(normalization=normalization,
                                         sequence_parallel=sequence_parallel),
                     hidden_size=8, eps=1e-6)
    assert type(norm) is module and norm.eps == 1e-6
    assert torch.equal(norm.weight, torch.ones(8))
    assert all(p.sequence_parallel is sequence_parallel for p in norm.parameters())
