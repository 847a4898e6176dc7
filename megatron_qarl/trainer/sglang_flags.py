"""The flags of `--rollout-engine sglang` (names as docs/sglang.md documents them), their
up-front checks, and the SGLangConfig they make. SGLangConfig and LaunchSpec hold the value
checks, so validation builds them once before any work starts and the trainer again with the
served model's dimensions."""
from __future__ import annotations

import os
from typing import Optional

from ..checkpoint.hf_config import Qwen3MoeDims
from ..rollout.sglang import LaunchSpec, SGLangConfig
from ..rollout.sglang.config import check_expert_split
from ..rollout.sglang.session import PAUSE_MODES
from ..rollout.sglang.transfer import IPC, NCCL


#: the flags of servers the trainer launches (--sglang-model-path), with their defaults
LAUNCH_DEFAULTS = {"sglang_num_engines": 1, "sglang_tp_size": 1, "sglang_ep_size": 1,
                   "sglang_base_gpu_id": 0, "sglang_port": 30000,
                   "sglang_mem_fraction_static": 0.5}


#: the flags of every SGLang rollout, with their defaults: the embedded engine refuses others
ENGINE_DEFAULTS = {"sglang_urls": None, "sglang_model_path": None, "sglang_colocated": False,
                   "rollout_weight_transfer": IPC, "rollout_nccl_master_address": None,
                   "rollout_nccl_master_port": None, "rollout_update_bucket_mb": 512.0,
                   "rollout_request_timeout": 600.0, "rollout_startup_timeout": 1800.0,
                   "rollout_retries": 3, "rollout_prompts_per_request": 16,
                   "rollout_pause_mode": "abort"}


#: the embedded engine's own flags, with their defaults: an SGLang rollout refuses others
EMBEDDED_DEFAULTS = {"rollout_max_batch": 256, "rollout_cuda_graph": True}


def add_sglang_args(p) -> None:
    g = p.add_argument_group("sglang rollout (--rollout-engine sglang; see docs/sglang.md)")
    engine = ENGINE_DEFAULTS
    g.add_argument("--sglang-urls", default=engine["sglang_urls"],
                   help="comma-separated URLs of running SGLang servers (one per engine)")
    g.add_argument("--sglang-model-path", default=engine["sglang_model_path"],
                   help="or launch the servers on this HF checkpoint (the quantized export)")
    launch = LAUNCH_DEFAULTS
    g.add_argument("--sglang-num-engines", type=int, default=launch["sglang_num_engines"],
                   help="servers to launch")
    g.add_argument("--sglang-tp-size", type=int, default=launch["sglang_tp_size"],
                   help="TP size of each launched server")
    g.add_argument("--sglang-ep-size", type=int, default=launch["sglang_ep_size"],
                   help="EP size (divides the TP size)")
    g.add_argument("--sglang-base-gpu-id", type=int, default=launch["sglang_base_gpu_id"],
                   help="first GPU of engine 0; engine e starts at base + e x tp size")
    g.add_argument("--sglang-port", type=int, default=launch["sglang_port"],
                   help="engine e listens on port + e")
    g.add_argument("--sglang-colocated", action="store_true", default=engine["sglang_colocated"],
                   help="the servers share the trainer's GPUs: launched ones get "
                        "--enable-memory-saver (running ones must have it), and they free "
                        "their weights and KV cache while the trainer trains")
    g.add_argument("--sglang-mem-fraction-static", type=float,
                   default=launch["sglang_mem_fraction_static"],
                   help="GPU memory fraction each launched server reserves")
    g.add_argument("--rollout-weight-transfer", choices=(IPC, NCCL),
                   default=engine["rollout_weight_transfer"],
                   help="ipc: servers on the trainer's node (CUDA IPC handles); nccl: "
                        "servers elsewhere (a broadcast group with the engines)")
    g.add_argument("--rollout-nccl-master-address", default=engine["rollout_nccl_master_address"],
                   help="--rollout-weight-transfer nccl: the sending trainer node's address")
    g.add_argument("--rollout-nccl-master-port", type=int,
                   default=engine["rollout_nccl_master_port"])
    g.add_argument("--rollout-update-bucket-mb", type=float,
                   default=engine["rollout_update_bucket_mb"],
                   help="size of the flattened buckets weights are published in")
    g.add_argument("--rollout-request-timeout", type=float,
                   default=engine["rollout_request_timeout"],
                   help="seconds for one /generate call")
    g.add_argument("--rollout-startup-timeout", type=float,
                   default=engine["rollout_startup_timeout"],
                   help="seconds to wait for the servers to become healthy")
    g.add_argument("--rollout-retries", type=int, default=engine["rollout_retries"],
                   help="retries per request, across engines")
    g.add_argument("--rollout-prompts-per-request", type=int,
                   default=engine["rollout_prompts_per_request"],
                   help="prompts per /generate call")
    g.add_argument("--rollout-pause-mode", choices=PAUSE_MODES,
                   default=engine["rollout_pause_mode"],
                   help="how generation pauses while weights are published")


def sglang_config(args, dims: Optional[Qwen3MoeDims], top_k: int = 8) -> SGLangConfig:
    """Raises ValueError naming the flag. `dims` (of the served model) is None when only the
    flags are checked: no check reads it. top_k: experts per token, to decode routed experts."""
    urls = tuple(u.strip() for u in (args.sglang_urls or "").split(",") if u.strip())
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--sglang-urls: {url!r} is not an http(s):// URL")
    launch = None
    if args.sglang_model_path is not None:
        launch = LaunchSpec(model_path=args.sglang_model_path,
                            num_engines=args.sglang_num_engines, tp_size=args.sglang_tp_size,
                            ep_size=args.sglang_ep_size, base_gpu_id=args.sglang_base_gpu_id,
                            port=args.sglang_port,
                            mem_fraction_static=args.sglang_mem_fraction_static,
                            colocated=args.sglang_colocated,
                            routed_experts=args.rollout_routing_replay,
                            deterministic=args.deterministic_mode)
    if args.rollout_weight_transfer == NCCL and not (args.rollout_nccl_master_address
                                                     and args.rollout_nccl_master_port):
        raise ValueError("--rollout-weight-transfer nccl needs --rollout-nccl-master-address "
                         "and --rollout-nccl-master-port (the sending trainer node)")
    engine_ports = range(launch.port, launch.port + launch.num_engines) if launch else ()
    if args.rollout_weight_transfer == NCCL and args.rollout_nccl_master_port in engine_ports:
        raise ValueError(f"--rollout-nccl-master-port {args.rollout_nccl_master_port} is a "
                         f"launched engine's HTTP port (--sglang-port {launch.port} to "
                         f"{engine_ports[-1]}): pick another")
    for flag in ("rollout_request_timeout", "rollout_startup_timeout"):
        if not getattr(args, flag) > 0:
            raise ValueError(f"--{flag.replace('_', '-')} must be > 0 seconds")
    return SGLangConfig(
        dims=dims, scheme_name=args.rollout_quant, urls=urls, launch=launch,
        request_timeout_s=args.rollout_request_timeout,
        startup_timeout_s=args.rollout_startup_timeout, retries=args.rollout_retries,
        prompts_per_request=args.rollout_prompts_per_request,
        bucket_mb=args.rollout_update_bucket_mb, transfer=args.rollout_weight_transfer,
        nccl_master_address=args.rollout_nccl_master_address or "",
        nccl_master_port=args.rollout_nccl_master_port or 0,
        pause_mode=args.rollout_pause_mode, colocated=args.sglang_colocated,
        routing_replay=args.rollout_routing_replay, top_k=top_k,
        seed=args.seed if args.deterministic_mode else None,
        log_dir=os.path.join(args.save, "sglang") if args.save else "runs/sglang")


def check_sglang_flags(args) -> None:
    """Raises ValueError naming the flag and the fix."""
    launched_only = [f"--{k.replace('_', '-')}" for k, default in LAUNCH_DEFAULTS.items()
                     if getattr(args, k) != default]
    if launched_only and (args.rollout_engine != "sglang" or args.sglang_model_path is None):
        raise ValueError(f"{launched_only[0]} sets up the SGLang servers the trainer launches "
                         f"(--rollout-engine sglang --sglang-model-path); running servers "
                         f"(--sglang-urls) keep their own settings and the embedded engine has "
                         f"none: drop it")
    if args.rollout_engine != "sglang":
        for flag, default in ENGINE_DEFAULTS.items():
            if getattr(args, flag) != default:
                raise ValueError(f"--{flag.replace('_', '-')} is for --rollout-engine sglang; "
                                 f"add it, or drop --{flag.replace('_', '-')}")
        return
    for name, default in EMBEDDED_DEFAULTS.items():
        if getattr(args, name) != default:
            raise ValueError(f"--{name.replace('_', '-')} sets up the embedded engine; SGLang "
                             f"servers size their batches and CUDA graphs with their own flags "
                             f"(--max-running-requests, --disable-cuda-graph): drop it")
    if not args.aligned_learner and args.rollout_quant != "none":
        raise ValueError(f"--rollout-engine sglang with --no-aligned-learner and --rollout-quant "
                         f"{args.rollout_quant}: the learner holds no {args.rollout_quant} "
                         f"weights to publish; use --aligned-learner or --rollout-engine "
                         f"embedded for this ablation")
    if args.rollout_quant.startswith("w4a16") and args.quant_targets != "experts":
        raise ValueError("--rollout-engine sglang serves W4A16 on routed experts only (dense "
                         "layers stay bf16): use --quant-targets experts")
    if args.rollout_quant == "fp8-block" and args.quant_targets != "experts+attention":
        raise ValueError("--rollout-engine sglang serves FP8 block on attention too (its fp8 "
                         "config converts every linear but the router, as tools/checkpoint.py "
                         "export writes it): use --quant-targets experts+attention")
    if args.rollout_quant == "int8":
        raise ValueError("--rollout-quant int8 runs on the embedded engine only: "
                         "tools/checkpoint.py cannot export SGLang's w8a8_int8 (which would "
                         "also quantize the router) and in-place updates of it are untested; "
                         "use --rollout-engine embedded")
    sglang_config(args, dims=None)
    if args.sglang_model_path is not None:
        from ..models import get_preset  # megatron-core: not imported for --help

        check_expert_split(
            args.rollout_quant, get_preset(args.model).moe_intermediate_size,
            args.sglang_tp_size, args.sglang_ep_size,
            f"--sglang-tp-size {args.sglang_tp_size} --sglang-ep-size {args.sglang_ep_size}",
            "raise --sglang-ep-size (up to the TP size: whole experts per rank) or lower "
            "--sglang-tp-size")
