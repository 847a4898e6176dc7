"""A single-process Megatron on CPU for the tests that need no second rank."""
import pytest

from megatron_qarl.compat.cpu_testing import init_parallel


@pytest.fixture
def single_process():
    init_parallel(tp=1, ep=1, seed=1234)
    yield
