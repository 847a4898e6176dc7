"""Settings of the SGLang rollout, each named after the flag that sets it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ...checkpoint.hf_config import Qwen3MoeDims
from ...quant import FP8Block, W4A16, get_scheme
from ...quant.fp8_block import BLOCK as FP8_BLOCK
from .launcher import LaunchSpec
from .session import PAUSE_MODES
from .transfer import IPC, NCCL, TRANSFER_FLAG


@dataclass(frozen=True)
class SGLangConfig:
    dims: Qwen3MoeDims  # of the served model: HF names, vocab rows, routed-experts layers
    scheme_name: str  # --rollout-quant: what the engine serves (w4a16-g128, fp8-block, none)
    urls: Sequence[str] = ()  # --sglang-urls: connect to running servers
    launch: Optional[LaunchSpec] = None  # or start them
    request_timeout_s: float = 600.0  # --rollout-request-timeout, one /generate call
    control_timeout_s: float = 300.0  # pause/flush/update calls
    startup_timeout_s: float = 1800.0  # --rollout-startup-timeout
    retries: int = 3  # --rollout-retries: per request, across engines
    backoff_s: float = 1.0
    prompts_per_request: int = 16  # --rollout-prompts-per-request: /generate batch size
    bucket_mb: float = 512.0  # --rollout-update-bucket-mb
    transfer: str = IPC  # --rollout-weight-transfer ipc | nccl
    nccl_master_address: str = ""
    nccl_master_port: int = 0
    pause_mode: str = "abort"  # --rollout-pause-mode
    routing_replay: bool = False  # --rollout-routing-replay
    # --sglang-colocated: running servers share the trainer's GPUs (started with
    # --enable-memory-saver); launched servers take LaunchSpec.colocated instead
    colocated: bool = False
    top_k: int = 8  # experts per token (for decoding routed experts)
    # --seed under --deterministic-mode: every sample's own sampling_seed (sample_seeds)
    seed: Optional[int] = None
    log_dir: str = "runs/sglang"

    def __post_init__(self):
        if bool(self.urls) == (self.launch is not None):
            raise ValueError("give either --sglang-urls (running servers) or "
                             "--sglang-num-engines with --sglang-model-path (launch them)")
        if self.transfer not in (IPC, NCCL):
            raise ValueError(f"{TRANSFER_FLAG} must be '{IPC}' or '{NCCL}', got "
                             f"{self.transfer!r}")
        if self.pause_mode not in PAUSE_MODES:
            raise ValueError(f"--rollout-pause-mode must be one of {PAUSE_MODES}")
        if self.prompts_per_request < 1:
            raise ValueError(f"--rollout-prompts-per-request must be >= 1, got "
                             f"{self.prompts_per_request}")
        if not self.bucket_mb > 0:
            raise ValueError(f"--rollout-update-bucket-mb must be > 0, got {self.bucket_mb}")
        if self.retries < 0:
            raise ValueError(f"--rollout-retries must be >= 0, got {self.retries}")
        if self.routing_replay and self.launch is not None and not self.launch.routed_experts:
            raise ValueError("--rollout-routing-replay needs the servers started with "
                             "--enable-return-routed-experts (LaunchSpec.routed_experts)")

    @property
    def bucket_bytes(self) -> int:
        return max(1, int(self.bucket_mb * (1 << 20)))


def check_expert_split(scheme_name: str, expert_ffn: int, tp_size: int, ep_size: int,
                       where: str, fix: str) -> None:
    """SGLang splits each expert's intermediate dim over tp/ep ranks; every rank's slice must
    hold whole quantization groups (W4A16: its group; FP8: 128-wide blocks) of the tensors the
    learner publishes. Raises ValueError naming `where` and `fix`."""
    scheme = get_scheme(scheme_name)
    unit = (scheme.group_size if isinstance(scheme, W4A16)
            else FP8_BLOCK if isinstance(scheme, FP8Block) else 1)
    split = tp_size // ep_size
    if expert_ffn % split == 0 and (expert_ffn // split) % unit == 0:
        return
    raise ValueError(
        f"{where}: SGLang splits each expert's {expert_ffn} intermediate columns over TP / EP "
        f"= {tp_size} / {ep_size} = {split} ranks, {expert_ffn / split:g} each, not a multiple "
        f"of {scheme_name}'s {unit}-wide groups, so a group of the published weights would "
        f"straddle two ranks. Fix: {fix}"
        + (", or a smaller W4A16 group (--rollout-quant w4a16-g64 or w4a16-g32)"
           if isinstance(scheme, W4A16) else ""))
