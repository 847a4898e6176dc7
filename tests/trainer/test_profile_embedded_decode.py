"""tools/profile_embedded_decode.py's refusals, which come before its minutes of set-up on a GPU."""
import importlib.util
import os
import sys

import pytest
import torch

# tools/ holds scripts, not a package: load the script as the user runs it
_SPEC = importlib.util.spec_from_file_location(
    "profile_embedded_decode", os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                                            "profile_embedded_decode.py"))
profile = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(profile)


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
