"""tools/bench_megatron_layers.py without a GPU: one line naming what it needs and where the CPU
checks of these layers are, not NCCL's error from the process group it would start."""
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
