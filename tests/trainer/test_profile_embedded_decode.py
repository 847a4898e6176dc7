"""tools/profile_embedded_decode.py's refusals, which come before its minutes of set-up on a GPU."""
import sys

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
