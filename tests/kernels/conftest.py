"""Kernel tests run on the GPU when there is one, else under Triton's CPU interpreter
(tests/conftest.py sets TRITON_INTERPRET)."""
import pytest
import torch


@pytest.fixture
def device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _assert_gemm_close(actual, expected):
    torch.testing.assert_close(actual.float(), expected.float(), rtol=2**-7, atol=1e-2)


@pytest.fixture
def assert_gemm_close():
    """fp32-accumulation tolerance: the kernels and the reference differ in summation order
    only, then both round to bf16 (one ulp = 2**-8 relative)."""
    return _assert_gemm_close


class _GuardedTorch:
    """The torch module, but `empty` gives the front of a larger buffer whose tail holds a byte
    pattern: a kernel that stores past its output's end changes the tail (the interpreter runs
    programs one after another, so a store spilled into the next row is overwritten by that
    row's own program, and only the last row's spill past the end shows)."""
    GUARD = 64  # elements

    def __init__(self):
        self.tails = []

    def __getattr__(self, name):
        return getattr(torch, name)

    def empty(self, *size, dtype=None, device=None):
        shape = torch.Size(size[0] if len(size) == 1 and not isinstance(size[0], int) else size)
        buf = torch.empty(shape.numel() + self.GUARD, dtype=dtype, device=device)
        self.tails.append(buf[shape.numel():].view(torch.uint8).fill_(0x5A))
        return buf[:shape.numel()].view(shape)

    def untouched(self) -> bool:
        return bool(self.tails) and all(bool((tail == 0x5A).all()) for tail in self.tails)


@pytest.fixture
def guard_outputs(monkeypatch):
    """guard_outputs(module) -> a handle whose untouched() says that no output the module made
    with torch.empty was written past its end."""
    def guard(module):
        guarded = _GuardedTorch()
        monkeypatch.setattr(module, "torch", guarded)
        return guarded
    return guard
