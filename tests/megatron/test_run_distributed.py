"""compat.cpu_testing.run_distributed: the harness every multi-rank CPU test runs under. A rank
that fails must fail the test with its own traceback, not come back as a result."""
import pytest

from megatron_qarl.compat.cpu_testing import run_distributed


def _rank_one_fails(rank, world_size, tag):
    if rank == 1:
        raise ValueError(f"{tag} on rank {rank}")
    return rank * 10 + world_size


def test_a_failing_rank_raises_with_its_traceback():
    # the results of ranks that succeed are checked by every other run_distributed test
    with pytest.raises(RuntimeError, match="rank 1 of 2 failed") as failed:
        run_distributed(_rank_one_fails, 2, "boom")
    assert "ValueError: boom on rank 1" in str(failed.value)
    assert "_rank_one_fails" in str(failed.value)  # the rank's own traceback
