"""tools/bench_megatron_layers.py without a GPU: one line naming what it needs and where the CPU
checks of these layers are, not NCCL's error from the process group it would start."""
import importlib.util
import os
import sys

import pytest
import torch

# tools/ holds scripts, not a package: load the script as the user runs it
_SPEC = importlib.util.spec_from_file_location(
    "bench_megatron_layers", os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                                          "bench_megatron_layers.py"))
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_without_a_gpu_it_says_so(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_megatron_layers.py", "--schemes", "none"])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="needs a CUDA GPU: .* tests/megatron"):
        bench.main()
