"""SGLang rollout bridge (SGLang >=0.5.21,<0.6; contract in shared/reference/sglang.md).

Generation, weight publishing (update-session protocol, flattened buckets over CUDA IPC or
NCCL), colocated memory release/resume, and the routed experts routing replay takes
(rollout/routing_replay.py). Importing this package needs no SGLang; the weight payloads and
the NCCL group do (the `sglang` extra)."""
from .config import SGLangConfig
from .engine import SGLangRolloutEngine
from .errors import EngineRequestError, EngineUnavailable, PublishError, SGLangError
from .launcher import LaunchSpec, server_command
from .version import PINNED, SUPPORTED_RANGE, check_server_version

__all__ = ["SGLangConfig", "SGLangRolloutEngine", "LaunchSpec", "server_command",
           "SGLangError", "EngineUnavailable", "EngineRequestError", "PublishError",
           "PINNED", "SUPPORTED_RANGE",
           "check_server_version"]
