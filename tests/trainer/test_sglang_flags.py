"""`--rollout-engine sglang` flags: each bad combination fails before any work with the flag
and the fix named, and good values reach SGLangConfig."""
import pytest

from megatron_qarl.trainer.flags import build_parser
from megatron_qarl.trainer.sglang_flags import check_sglang_flags, sglang_config

SGLANG = ["--rollout-engine", "sglang"]


def _check(*argv):
    check_sglang_flags(build_parser().parse_args(list(argv)))


@pytest.mark.parametrize("argv, message", [
    (SGLANG, r"--sglang-urls.*--sglang-model-path"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--sglang-model-path", "/m"],
     r"either --sglang-urls"),
    (["--sglang-urls", "http://a:1"], r"--sglang-urls is for --rollout-engine sglang"),
    (SGLANG + ["--sglang-urls", "a:30000"], r"--sglang-urls: 'a:30000' is not an http"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-weight-transfer", "nccl"],
     r"--rollout-nccl-master-address and --rollout-nccl-master-port"),
    (SGLANG + ["--sglang-model-path", "/m", "--sglang-tp-size", "2", "--sglang-ep-size", "4"],
     r"--sglang-tp-size 2 / --sglang-ep-size 4"),
    # the trainer binds its NCCL port only at the first publish: an engine could take it first
    (SGLANG + ["--sglang-model-path", "/m", "--sglang-num-engines", "2", "--sglang-port",
               "30000", "--rollout-weight-transfer", "nccl", "--rollout-nccl-master-address",
               "node0", "--rollout-nccl-master-port", "30001"],
     r"--rollout-nccl-master-port 30001 is a launched engine's HTTP port \(--sglang-port "
     r"30000 to 30001\)"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-update-bucket-mb", "0"],
     r"--rollout-update-bucket-mb must be > 0"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-request-timeout", "0"],
     r"--rollout-request-timeout must be > 0"),
    (SGLANG + ["--sglang-model-path", "/m", "--rollout-startup-timeout", "0"],
     r"--rollout-startup-timeout must be > 0"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-quant", "w4a16",
               "--no-aligned-learner"], r"--no-aligned-learner.*--aligned-learner"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-quant", "w4a16-g64",
               "--quant-targets", "experts+attention"], r"--quant-targets experts"),
    # SGLang's fp8 config quantizes attention; a learner with bf16 attention published it bf16
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-quant", "fp8-block"],
     r"FP8 block on attention too.*--quant-targets experts\+attention"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-quant", "int8",
               "--quant-targets", "experts+attention"], r"int8 runs on the embedded engine only"),
    # SGLang's settings with the embedded engine were ignored
    (["--sglang-colocated"], r"--sglang-colocated is for --rollout-engine sglang"),
    (["--rollout-prompts-per-request", "4"],
     r"--rollout-prompts-per-request is for --rollout-engine sglang"),
    # launch settings with servers the trainer does not launch were ignored
    (SGLANG + ["--sglang-urls", "http://a:1", "--sglang-tp-size", "4"],
     r"--sglang-tp-size sets up the SGLang servers the trainer launches"),
    (["--sglang-mem-fraction-static", "0.7"], r"--sglang-mem-fraction-static sets up"),
    # and the embedded engine's with SGLang's (session 74's review)
    (SGLANG + ["--sglang-urls", "http://a:1", "--rollout-max-batch", "4"],
     r"--rollout-max-batch sets up the embedded engine.*--max-running-requests"),
    (SGLANG + ["--sglang-urls", "http://a:1", "--no-rollout-cuda-graph"],
     r"--rollout-cuda-graph sets up the embedded engine.*--disable-cuda-graph"),
])
def test_bad_sglang_flags_name_the_flag(argv, message):
    with pytest.raises(ValueError, match=message):
        _check(*argv)


@pytest.mark.parametrize("quant, tp, ep, message", [
    ("w4a16", 4, 1, r"--sglang-tp-size 4 --sglang-ep-size 1: .*768 .* 192 each.*128-wide"
                    r".*raise --sglang-ep-size.*w4a16-g64"),
    ("fp8-block", 8, 1, r"96 each, not a multiple of fp8-block's 128-wide"),
    ("w4a16", 4, 4, None), ("w4a16-g64", 4, 1, None), ("fp8-block", 8, 4, None),
])
def test_launched_servers_split_experts_on_whole_groups(quant, tp, ep, message):
    """Qwen3-30B-A3B's 768-wide experts over SGLang's TP / EP (formats.md: reject a layout
    whose per-rank slice is not a multiple of the group)."""
    argv = SGLANG + ["--model", "qwen3-30b-a3b", "--sglang-model-path", "/m", "--rollout-quant",
                     quant, "--sglang-tp-size", str(tp), "--sglang-ep-size", str(ep),
                     "--quant-targets", "experts" if quant.startswith("w4a16") else
                     "experts+attention"]
    if message is None:
        _check(*argv)
    else:
        with pytest.raises(ValueError, match=message):
            _check(*argv)


def test_flags_reach_the_config():
    args = build_parser().parse_args(SGLANG + [
        "--sglang-urls", "http://a:1, http://b:2", "--rollout-weight-transfer", "nccl",
        "--rollout-nccl-master-address", "node0", "--rollout-nccl-master-port", "29600",
        "--rollout-update-bucket-mb", "2", "--rollout-pause-mode", "retract",
        "--rollout-prompts-per-request", "4", "--rollout-quant", "fp8-block",
        "--quant-targets", "experts+attention"])
    check_sglang_flags(args)
    cfg = sglang_config(args, dims=None)
    assert cfg.urls == ("http://a:1", "http://b:2") and cfg.launch is None
    assert (cfg.transfer, cfg.nccl_master_address, cfg.nccl_master_port) == \
        ("nccl", "node0", 29600)
    assert cfg.bucket_bytes == 2 << 20 and cfg.pause_mode == "retract"
    assert cfg.prompts_per_request == 4 and cfg.scheme_name == "fp8-block"


def test_timeouts_retries_mem_fraction_and_log_dir_reach_the_config(tmp_path):
    """Their defaults and SGLangConfig's / LaunchSpec's agree: a flag dropped on the way would
    go unseen with default values."""
    args = build_parser().parse_args(SGLANG + [
        "--sglang-model-path", "/m", "--rollout-request-timeout", "30",
        "--rollout-startup-timeout", "90", "--rollout-retries", "0",
        "--sglang-mem-fraction-static", "0.3", "--save", str(tmp_path)])
    check_sglang_flags(args)
    cfg = sglang_config(args, dims=None)
    assert (cfg.request_timeout_s, cfg.startup_timeout_s, cfg.retries) == (30.0, 90.0, 0)
    assert cfg.launch.mem_fraction_static == 0.3
    assert cfg.log_dir == str(tmp_path / "sglang")


def test_launched_servers_release_memory_only_when_colocated():
    """Servers on GPUs of their own keep their memory."""
    launched = SGLANG + ["--sglang-model-path", "/m"]
    separate = sglang_config(build_parser().parse_args(launched), dims=None)
    assert not separate.launch.colocated and not separate.colocated
    shared = sglang_config(build_parser().parse_args(launched + ["--sglang-colocated"]),
                           dims=None)
    assert shared.launch.colocated and shared.colocated


def test_launch_flags_reach_the_launch_spec():
    args = build_parser().parse_args(SGLANG + [
        "--sglang-model-path", "/ckpt", "--sglang-num-engines", "2", "--sglang-tp-size", "4",
        "--sglang-ep-size", "4", "--sglang-base-gpu-id", "4", "--sglang-port", "31000"])
    spec = sglang_config(args, dims=None).launch
    assert (spec.model_path, spec.num_engines, spec.tp_size, spec.ep_size) == ("/ckpt", 2, 4, 4)
    assert spec.url(1) == "http://127.0.0.1:31001" and spec.base_gpu_id == 4


def test_routing_replay_asks_the_servers_for_routes():
    args = build_parser().parse_args(SGLANG + ["--sglang-model-path", "/ckpt",
                                               "--rollout-routing-replay"])
    check_sglang_flags(args)
    cfg = sglang_config(args, dims=None, top_k=2)
    assert cfg.routing_replay and cfg.launch.routed_experts and cfg.top_k == 2
    plain = sglang_config(build_parser().parse_args(SGLANG + ["--sglang-model-path", "/m"]),
                          dims=None)
    assert not plain.routing_replay and not plain.launch.routed_experts


def test_deterministic_mode_seeds_every_sample():
    """--deterministic-mode launches batch-invariant servers and passes --seed, from which each
    sample gets its own sampling_seed (without one, a prompt's n samples were identical)."""
    args = build_parser().parse_args(SGLANG + ["--sglang-model-path", "/m", "--seed", "5",
                                               "--deterministic-mode"])
    cfg = sglang_config(args, dims=None)
    assert cfg.launch.deterministic and cfg.seed == 5
    assert sglang_config(build_parser().parse_args(SGLANG + ["--sglang-model-path", "/m"]),
                         dims=None).seed is None
