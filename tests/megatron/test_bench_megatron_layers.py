"""tools/bench_megatron_layers.py without a GPU: one line naming what it needs and where the CPU
checks of these layers are, not NCCL's error from the process group it would start; and its step
time's arithmetic, which a GPU run alone would not check."""
import sys

import pytest
import torch

from tool_scripts import load_tool

bench = load_tool("bench_megatron_layers")


def test_without_a_gpu_it_says_so(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_megatron_layers.py", "--schemes", "none"])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="needs a CUDA GPU: .* tests/megatron"):
        bench.main()


def test_the_step_time_is_the_mean_of_the_steps_after_the_warmup():
    """Two warm-up steps of 9 and 5 s, then 1, 2 and 6 s: 3 s a step (their median is 2 s)."""
    assert bench.mean_step_s([9.0, 5.0, 1.0, 2.0, 6.0], 2) == 3.0
