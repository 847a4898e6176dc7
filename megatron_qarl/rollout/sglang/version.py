"""Which SGLang servers the bridge talks to.

The weight-update session (begin/end_weight_update) exists from 0.5.21; the contract was read
from 0.5.23 (the version the Docker image pins). Before 0.5.21 an in-place update of INT4
Marlin MoE weights silently keeps the old repacked layout (sglang issue #14158), so W4A16 on
an older server would serve stale weights: refused here rather than trusted.
"""
from __future__ import annotations

import logging
import re
from typing import Tuple

from .errors import EngineRequestError

MIN_VERSION = (0, 5, 21)
TESTED_BELOW = (0, 6, 0)
PINNED = "0.5.23"
SUPPORTED_RANGE = ">=0.5.21,<0.6"

log = logging.getLogger(__name__)


def parse_version(text: str) -> Tuple[int, int, int]:
    m = re.match(r"^\s*v?(\d+)\.(\d+)\.(\d+)", str(text))
    if not m:
        raise EngineRequestError(f"cannot read SGLang version {text!r} from /server_info")
    return tuple(int(g) for g in m.groups())


def check_server_version(version: str, scheme_name: str, url: str) -> None:
    """Refuse servers the bridge cannot update correctly."""
    v = parse_version(version)
    if v < MIN_VERSION:
        if scheme_name.startswith("w4a16"):
            raise EngineRequestError(
                f"{url}: SGLang {version} cannot take in-place W4A16 (int4 Marlin MoE) weight "
                f"updates: before 0.5.21 the old repacked layout stays in place (sglang issue "
                f"#14158) and the engine would sample with stale weights. Fix: run SGLang "
                f"{SUPPORTED_RANGE} (docker/Dockerfile pins {PINNED}), or --rollout-quant none")
        raise EngineRequestError(
            f"{url}: SGLang {version} lacks the begin/end_weight_update session the bridge "
            f"uses; run SGLang {SUPPORTED_RANGE} (docker/Dockerfile pins {PINNED})")
    if v >= TESTED_BELOW:
        log.warning("%s: SGLang %s is newer than the range the bridge was written against "
                    "(%s); check docs/sglang.md if updates misbehave", url, version,
                    SUPPORTED_RANGE)
