"""The trainer's set-up from its flags: how long a collective may wait before the group fails,
and the routers' load-balancing weight."""
from datetime import timedelta

import pytest
import torch.distributed as dist
from megatron.core import parallel_state

from megatron_qarl.trainer import distributed
from megatron_qarl.trainer.flags import build_parser
from megatron_qarl.trainer.models import model_config
from megatron_qarl.trainer.validation import FlagError, validate


def _args(*argv):
    return build_parser().parse_args(["--device", "cpu", *argv])


@pytest.mark.parametrize("argv, minutes", [
    ((), None),  # torch's and Megatron's own
    (("--distributed-timeout-minutes", "20"), 20.0),
    (("--rollout-engine", "sglang", "--sglang-urls", "http://a:1"), 120.0),
    (("--rollout-engine", "sglang", "--sglang-urls", "http://a:1",
      "--distributed-timeout-minutes", "45"), 45.0),
])
def test_the_timeout_reaches_torchs_and_megatrons_groups(monkeypatch, argv, minutes):
    """Under SGLang every rank but 0 waits in one collective through the whole rollout, which
    torch's 10 minutes would cut; the groups get the flag's value (or the engine's default)."""
    seen = {}
    monkeypatch.setattr(dist, "is_initialized", lambda: False)
    monkeypatch.setattr(dist, "init_process_group",
                        lambda backend, **kw: seen.update(torch=kw.get("timeout")))
    monkeypatch.setattr(parallel_state, "initialize_model_parallel",
                        lambda **kw: seen.update(megatron=kw.get("distributed_timeout_minutes")))
    monkeypatch.setattr(distributed.tensor_parallel, "model_parallel_cuda_manual_seed",
                        lambda seed: None)
    # the CPU support patches torch.cuda for the whole process: not in a worker that may run
    # GPU tests next
    monkeypatch.setattr("megatron_qarl.compat.cpu_testing.patch_megatron_for_cpu", lambda: None)
    distributed.init_distributed(_args(*argv))
    if minutes is None:
        assert seen == {"torch": None, "megatron": None}
    else:
        assert seen == {"torch": timedelta(minutes=minutes), "megatron": int(minutes)}


def test_a_timeout_that_is_not_positive_names_the_flag():
    with pytest.raises(FlagError, match="--distributed-timeout-minutes must be > 0, got 0"):
        validate(_args("--distributed-timeout-minutes", "0"), world_size=1)


@pytest.mark.parametrize("argv, coeff", [((), 0.001), (("--moe-aux-loss-coeff", "0"), 0.0),
                                         (("--moe-aux-loss-coeff", "0.01"), 0.01)])
def test_the_routers_load_balancing_weight_is_the_presets_or_the_flags(argv, coeff):
    _, config = model_config(_args("--model", "qwen3-30b-a3b", *argv),
                             use_cpu_initialization=True)
    assert config.moe_aux_loss_coeff == coeff


def _reduce_on(rank, init_file, out):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=2)
    parallel_state.get_data_parallel_group = lambda: None  # the whole (two-rank) world
    out[rank] = distributed.all_reduce_metrics(
        {"reward": float(rank), "ratio_max": 10.0 * rank, "ratio_min": 5.0 + rank}, "cpu")
    dist.destroy_process_group()


def test_metrics_over_ranks_are_means_and_their_extremes_extremes(tmp_path):
    """A rank's ratio_max is a maximum: over ranks the max of them, not their mean."""
    import torch.multiprocessing as mp

    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_reduce_on, args=(str(tmp_path / "init"), out), nprocs=2)
        assert out[0] == out[1] == {"reward": 0.5, "ratio_max": 10.0, "ratio_min": 5.0}
