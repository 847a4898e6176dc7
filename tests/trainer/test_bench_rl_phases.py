"""tools/bench_rl_phases.py's trainer patch: the step's joint weight refresh timed once and
counted by the weights it re-quantized."""
import importlib.util
import os

import pytest
import torch

from megatron_qarl.layers import weight_cache
from megatron_qarl.quant import get_scheme
from megatron_qarl.trainer.metrics import PhaseTimer

# tools/ holds scripts, not a package: load the script as the user runs it
_SPEC = importlib.util.spec_from_file_location(
    "bench_rl_phases", os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                                    "bench_rl_phases.py"))
bench_rl_phases = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_rl_phases)


def test_patch_counts_the_weights_a_joint_refresh_quantizes():
    saved = (PhaseTimer.__init__, PhaseTimer.phase, PhaseTimer.metrics,
             weight_cache.quantize_together)
    try:
        bench_rl_phases.patch_trainer()
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
    finally:
        (PhaseTimer.__init__, PhaseTimer.phase, PhaseTimer.metrics,
         weight_cache.quantize_together) = saved


def test_quantize_without_a_gpu_is_a_usage_error(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as stop:
        bench_rl_phases.main(["quantize", "--layers", "1"])
    assert stop.value.code == 2 and "GPU machine" in capsys.readouterr().err
