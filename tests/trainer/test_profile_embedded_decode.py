"""tools/profile_embedded_decode.py's refusals, which come before its minutes of set-up on a GPU,
and the arithmetic of the figures it prints, which a GPU run alone would not check."""
import sys
from types import SimpleNamespace

import pytest
import torch

from tool_scripts import load_tool

profile = load_tool("profile_embedded_decode")


@pytest.mark.parametrize("new, warmup", [(8, 8), (4, 8)])
def test_new_tokens_must_exceed_the_warmup_tokens(monkeypatch, capsys, new, warmup):
    """The steady step is the slope between generations of the two lengths: equal lengths
    divide by zero after the model is built and the generations have run."""
    monkeypatch.setattr(sys, "argv", ["profile_embedded_decode.py", "--new-tokens", str(new),
                                      "--warmup-tokens", str(warmup)])
    with pytest.raises(SystemExit) as stop:
        profile.main()
    assert stop.value.code == 2
    assert f"--new-tokens ({new}) must exceed --warmup-tokens ({warmup})" in capsys.readouterr().err


def test_without_a_gpu_it_says_so(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["profile_embedded_decode.py"])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        profile.main()


def test_the_steady_step_is_the_slope_and_the_fixed_cost_the_intercept():
    """10 ms for 32 tokens and 18 ms for 64: 0.25 ms a step and 2 ms fixed; 18 / 64 wall."""
    assert profile.decode_step_ms(10.0, 32, 18.0, 64) == (0.28125, 0.25, 2.0)


def test_the_profiled_totals_are_per_decode_step():
    """Over 4 steps: 8 ms of CUDA time (not the CPU's), the three launch calls and a graph
    replay, both kinds of sync, the async copies only."""
    def event(key, count=0, device_us=0.0, device="CPU"):
        return SimpleNamespace(key=key, count=count, self_device_time_total=device_us,
                               device_type=SimpleNamespace(name=device))

    events = [event("gemm", device_us=6000.0, device="CUDA"),
              event("softmax", device_us=2000.0, device="CUDA"),
              event("aten::mm", device_us=999.0),
              event("cudaLaunchKernel", 4), event("cuLaunchKernel", 2),
              event("cudaLaunchKernelExC", 1), event("cudaGraphLaunch", 5),
              event("cudaStreamSynchronize", 3), event("cudaDeviceSynchronize", 1),
              event("cudaMemcpyAsync", 6), event("cudaMemcpy", 100)]
    assert profile.per_step_profile(events, 4) == (2.0, 3.0, 1.0, 1.5)
