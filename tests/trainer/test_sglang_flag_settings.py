"""Each `--rollout-engine sglang` flag reaches the setting it names (the defaults of the
flags and of SGLangConfig / LaunchSpec agree, so a flag dropped on the way would go unseen
with default values): launched servers on GPUs of their own keep their memory."""
import pytest

from megatron_qarl.trainer.flags import build_parser
from megatron_qarl.trainer.sglang_flags import check_sglang_flags, sglang_config

LAUNCH = ["--rollout-engine", "sglang", "--sglang-model-path", "/m"]


def _config(*argv):
    args = build_parser().parse_args(LAUNCH + list(argv))
    check_sglang_flags(args)
    return sglang_config(args, dims=None)


def test_non_default_values_reach_the_config_and_launch_spec(tmp_path):
    cfg = _config("--rollout-request-timeout", "30", "--rollout-startup-timeout", "90",
                  "--rollout-retries", "0", "--sglang-mem-fraction-static", "0.3",
                  "--save", str(tmp_path))
    assert (cfg.request_timeout_s, cfg.startup_timeout_s, cfg.retries) == (30.0, 90.0, 0)
    assert cfg.launch.mem_fraction_static == 0.3
    assert cfg.log_dir == str(tmp_path / "sglang")


def test_launched_servers_release_memory_only_when_colocated():
    separate = _config()
    assert not separate.launch.colocated and not separate.colocated
    shared = _config("--sglang-colocated")
    assert shared.launch.colocated and shared.colocated


def test_startup_timeout_must_be_positive():
    with pytest.raises(ValueError, match="--rollout-startup-timeout must be > 0"):
        _config("--rollout-startup-timeout", "0")
