"""DriverGeneration in 2 gloo processes: rank 0 generates for both ranks in one call;
replica peers (same data-parallel rank) get identical samples, different data-parallel ranks
their own, and a failure on the driver reaches every rank instead of hanging it."""
import pytest

from megatron_qarl.compat.cpu_testing import run_distributed
from megatron_qarl.rollout.base import RolloutEngine, Sample, SamplingParams
from megatron_qarl.rollout.sglang.driver_generation import DriverGeneration

PARAMS = SamplingParams(max_new_tokens=2, n=2)


class CountingEngine(RolloutEngine):
    """Answers prompt p's sample j with [call number, p[0], j]; fails when asked to."""

    def __init__(self, fail=False):
        self.calls, self.fail = 0, fail

    def generate(self, prompts, params):
        self.calls += 1
        if self.fail:
            raise RuntimeError("engine down")
        return [[Sample(list(p), [self.calls, p[0], j], [-1.0] * 3, "length")
                 for j in range(params.n)] for p in prompts]

    def publish_weights(self, model, version):
        self.weight_version = version


SCENARIOS = {"own replicas": ((0, 1), False), "replica peers": ((0, 0), False),
             "driver fails": ((0, 1), True)}


def _generate(rank, dp_ranks, fail):
    engine = CountingEngine(fail)
    prompts = [[10 * dp_ranks[rank] + 1], [10 * dp_ranks[rank] + 2]]
    try:
        groups = DriverGeneration(engine, dp_ranks[rank]).generate(prompts, PARAMS)
    except Exception as e:  # noqa: BLE001 - reported to the parent
        return ("raised", f"{type(e).__name__}: {e}")
    return engine.calls, [[s.response_ids for s in g] for g in groups]


def _all_scenarios(rank, _world):
    """One spawn for every scenario: each is a gather/scatter pair on both ranks."""
    return {name: _generate(rank, *case) for name, case in SCENARIOS.items()}


@pytest.fixture(scope="module")
def outcomes():
    return run_distributed(_all_scenarios, 2)


@pytest.mark.parametrize("scenario", ["own replicas", "replica peers"])
def test_each_rank_gets_its_own_prompts_samples_from_one_driver_call(outcomes, scenario):
    dp_ranks = SCENARIOS[scenario][0]
    (calls0, out0), (calls1, out1) = (outcomes[0][scenario], outcomes[1][scenario])
    assert (calls0, calls1) == (1, 0)  # one call, on the driver only
    for dp, out in ((dp_ranks[0], out0), (dp_ranks[1], out1)):
        assert out == [[[1, 10 * dp + k, j] for j in range(2)] for k in (1, 2)]


def test_a_driver_failure_is_raised_on_every_rank(outcomes):
    first, second = outcomes[0]["driver fails"], outcomes[1]["driver fails"]
    assert first == ("raised", "RuntimeError: engine down")
    assert second[0] == "raised" and "engine down" in second[1] and "rank 0" in second[1]
