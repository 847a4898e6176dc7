"""Set before anything imports Triton: @triton.jit reads TRITON_INTERPRET when a kernel is
defined, so the kernels run under Triton's CPU interpreter on machines without a GPU."""
import os

import pytest
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


@pytest.fixture
def operand_dequantize_calls(monkeypatch):
    """Records the tokens_per_expert of every dequantize the W4A16 operand helper makes
    (None: all experts), so tests can count how often the bf16 operand is rebuilt."""
    from qarl_kernels import w4a16_operand

    calls, real = [], w4a16_operand.w4a16_dequantize

    def counting(qweight, tokens_per_expert=None):
        calls.append(tokens_per_expert)
        return real(qweight, tokens_per_expert)

    monkeypatch.setattr(w4a16_operand, "w4a16_dequantize", counting)
    return calls


#: the folders whose files take minutes (the trainer's runs in subprocesses, the SGLang bridge's
#: two-process ones), collected first: pytest-xdist hands whole files to its workers in
#: collection order (README's --dist loadfile), and one of these last kept a worker busy
#: minutes after the other had run out
SLOW_FOLDERS_FIRST = ("tests/trainer/", "tests/rollout_sglang/")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(SLOW_FOLDERS_FIRST))
