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
