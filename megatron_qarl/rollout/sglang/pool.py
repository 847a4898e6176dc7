"""The engines a rollout routes to: least-loaded choice among those in rotation, and the
states that keep an engine out (unreachable, or missed a weight update and so holds weights
that are not the current version, or lost: a memory release or resume failed part-way, so
what its weights' memory holds is unknown until it is restarted)."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from .errors import EngineUnavailable
from .http_client import EngineClient

UP, DOWN, STALE, LOST = "up", "down", "stale", "lost"


@dataclass
class EngineSlot:
    client: EngineClient
    tp_size: int = 1
    inflight: int = 0
    state: str = UP
    reason: str = ""
    weight_version: Optional[int] = None
    info: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.client.url


class EnginePool:
    def __init__(self, slots: List[EngineSlot]):
        if not slots:
            raise ValueError("the SGLang rollout needs at least one engine: pass "
                             "--sglang-urls or --sglang-num-engines")
        self.slots = slots
        self._lock = threading.Lock()

    def in_rotation(self) -> List[EngineSlot]:
        return [s for s in self.slots if s.state == UP]

    def acquire(self, avoid: Sequence[EngineSlot] = ()) -> EngineSlot:
        """The up engine with the fewest requests in flight, one not in avoid (those that
        failed this request) where one is up; a down engine that answers its health check
        again is re-admitted (a stale one waits for the next publish)."""
        with self._lock:
            up = self.in_rotation()
            if not up:
                for s in self.slots:
                    if s.state == DOWN and s.client.healthy():
                        s.state, s.reason = UP, ""
                        up.append(s)
            if not up:
                raise EngineUnavailable(
                    "no SGLang engine in rotation: "
                    + "; ".join(f"{s.url} {s.state}: {s.reason}" for s in self.slots))
            avoided = {id(s) for s in avoid}
            slot = min([s for s in up if id(s) not in avoided] or up, key=lambda s: s.inflight)
            slot.inflight += 1
            return slot

    def release(self, slot: EngineSlot) -> None:
        with self._lock:
            slot.inflight -= 1

    def mark(self, slot: EngineSlot, state: str, reason: str) -> None:
        with self._lock:
            slot.state, slot.reason = state, reason


def for_each_engine(slots: List[EngineSlot], fn) -> None:
    """fn(slot) on every engine concurrently; fn handles its own errors."""
    with ThreadPoolExecutor(max_workers=max(1, len(slots))) as ex:
        list(ex.map(fn, slots))
