"""tools/bench_rl_phases.py's trainer patch: the step's joint weight refresh timed once and
counted by the weights it re-quantized; the median and projection of its quantize timings."""
from types import SimpleNamespace

import pytest
import torch

from megatron_qarl.layers import weight_cache
from megatron_qarl.quant import get_scheme
from megatron_qarl.trainer.metrics import PhaseTimer

from tool_scripts import load_tool

bench_rl_phases = load_tool("bench_rl_phases")


@pytest.fixture
def patched():
    """The trainer patched as `bench_rl_phases.py train` patches it, restored afterwards."""
    saved = (PhaseTimer.__init__, PhaseTimer.phase, PhaseTimer.metrics,
             weight_cache.quantize_together)
    bench_rl_phases.patch_trainer()
    yield
    (PhaseTimer.__init__, PhaseTimer.phase, PhaseTimer.metrics,
     weight_cache.quantize_together) = saved


def test_patch_counts_the_weights_a_joint_refresh_quantizes(patched):
    scheme = get_scheme("w4a16")
    masters = [torch.nn.Parameter(torch.randn(8, 128)) for _ in range(3)]
    caches = [weight_cache.QuantizedWeightCache(scheme, [m], f"w{i}", stacked=False)
              for i, m in enumerate(masters)]
    timer = PhaseTimer()
    weight_cache.invalidate_together(caches)
    with timer.phase("train"):
        for cache in caches:
            cache.get()
        caches[0].get()  # fresh: not counted again
    metrics = timer.metrics()
    assert metrics["quant/count"] == 3 and metrics["quant/seconds"] > 0
    assert all(cache.quantize_count == 1 for cache in caches)
    assert PhaseTimer().metrics()["quant/count"] == 0  # a new step's timer starts at zero
    timer = PhaseTimer()
    weight_cache.invalidate_together(caches)
    caches[0].invalidate()  # stale on its own, and still in the others' group
    with timer.phase("train"):
        caches[0].get()
        caches[1].get()  # the group's refresh skips the fresh caches[0]
    assert timer.metrics()["quant/count"] == 3
    assert [cache.quantize_count for cache in caches] == [2, 2, 2]


def test_a_phases_memory_is_its_largest_peak_in_the_step(patched, monkeypatch):
    """A phase's peak is measured from its own start (the allocator's peak reset there) and,
    for a phase run twice in a step, is the larger of its two; the step's start is the
    allocation at its first phase. (An allocator faked on the CPU: the figures are the GPU's.)"""
    gib = 2**30
    gpu = {"allocated": 1 * gib, "peak": 0}
    monkeypatch.setattr(bench_rl_phases, "_sync", lambda: True)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: gpu["allocated"])
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats",
                        lambda: gpu.update(peak=gpu["allocated"]))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: gpu["peak"])
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda: gpu["peak"] + gib)
    timer = PhaseTimer()
    for name, allocated, peak in (("rollout", 1, 5), ("train", 2, 3), ("rollout", 2, 4)):
        gpu["allocated"] = allocated * gib
        with timer.phase(name):
            gpu["peak"] = max(gpu["peak"], peak * gib)
    metrics = timer.metrics()
    assert {k: v for k, v in metrics.items() if k.startswith("mem/")} == {
        "mem/step_start_gib": 1.0, "mem/rollout_peak_gib": 5.0, "mem/rollout_reserved_gib": 6.0,
        "mem/train_peak_gib": 3.0, "mem/train_reserved_gib": 4.0}


def test_a_timing_is_the_median_of_its_repeats(monkeypatch):
    """After one untimed call; repeats of 5, 1 and 3 s time 3 s, not the last or the first."""
    clock = iter([0.0, 5.0, 10.0, 11.0, 20.0, 23.0])
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(bench_rl_phases, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    calls = []
    assert bench_rl_phases._median_s(lambda: calls.append(1), 3) == 3.0
    assert len(calls) == 4


@pytest.mark.parametrize("times, middle", [([5.0, 1.0, 2.0], 2.0), ([4.0, 1.0, 3.0, 2.0], 3.0)])
def test_the_median_is_the_middle_repeat_and_the_upper_one_of_an_even_count(times, middle):
    """Not the mean (2.67 and 2.5 s) nor, for an even count, the mean of the middle two (2.5)."""
    assert bench_rl_phases.median(times) == middle


def test_a_layer_is_its_fc1_and_fc2_and_the_projection_is_linear_in_the_layers():
    keys = ("reference_path_ms", "trainer_path_ms", "fused_kernel_ms",
            "fused_kernel_with_stack_ms")
    timings = {"fc1": {"shape": [128, 1536, 2048], **dict(zip(keys, (3.0, 1.0, 0.5, 0.75)))},
               "fc2": {"shape": [128, 2048, 768], **dict(zip(keys, (1.0, 0.5, 0.25, 0.5)))}}
    one_layer, projected = bench_rl_phases.project(timings, 48)
    assert one_layer == dict(zip(keys, (4.0, 1.5, 0.75, 1.25)))
    assert projected == dict(zip(keys, (192.0, 72.0, 36.0, 60.0)))


@pytest.mark.parametrize("argv", [[], ["profile"]])
def test_a_missing_or_unknown_subcommand_is_named(argv):
    with pytest.raises(SystemExit) as stop:
        bench_rl_phases.main(argv)
    assert str(stop.value.code).endswith("error: the first argument is train or quantize")


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_prints_the_usage(flag, capsys):
    bench_rl_phases.main([flag])
    assert "python tools/bench_rl_phases.py quantize" in capsys.readouterr().out


def test_quantize_without_a_gpu_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as stop:
        bench_rl_phases.main(["quantize", "--layers", "1"])
    assert stop.value.code == 2 and "GPU machine" in capsys.readouterr().err
