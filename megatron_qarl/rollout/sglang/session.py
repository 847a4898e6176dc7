"""One publish on the sending rank: the update-session protocol on every engine, the
buckets, and what happens to an engine that fails part-way.

Order per engine (shared/reference/sglang.md): pause_generation -> flush_cache ->
begin_weight_update -> every bucket (flush_cache=false) -> end_weight_update ->
update_weight_version -> continue_generation. begin_weight_update restores quantized MoE
weights to checkpoint layout, after which their old contents are garbage, so a publish
always resends every tensor.

An engine that fails at any step is dropped from the rest of the session and marked stale:
it stays paused (it never serves the half-written weights) and out of rotation until a
later publish rewrites all of its weights. Its weight-update session is still ended (best
effort): SGLang holds one at a time and refuses the next publish's begin_weight_update while
one is open. The bucket stream is always drained to the end, because producing it drives
collectives on every trainer rank. An error raised by the stream itself (a shard layout, a
gather, memory) fails every engine still live the same way, then propagates: each has taken
part of the weights.
"""
from __future__ import annotations

import logging
from typing import Iterable, List

from ..publish.buckets import Bucket
from .errors import PublishError
from .pool import STALE, UP, EngineSlot, for_each_engine

log = logging.getLogger(__name__)

PAUSE_MODES = ("abort", "retract", "in_place")


class UpdateSession:
    def __init__(self, slots: List[EngineSlot], transport, version: int, pause_mode: str,
                 timeout_s: float):
        if pause_mode not in PAUSE_MODES:
            raise ValueError(f"--rollout-pause-mode must be one of {PAUSE_MODES}, got "
                             f"{pause_mode!r}")
        self.slots, self.live = list(slots), list(slots)
        self.failed = {}
        self.transport = transport
        self.version = version
        self.pause_mode = pause_mode
        self.timeout_s = timeout_s

    def _fail(self, slot: EngineSlot, error: Exception) -> None:
        if slot in self.live:
            self.live.remove(slot)
        self.failed[slot.url] = f"{type(error).__name__}: {error}"
        slot.state, slot.reason = STALE, f"failed publish of v{self.version}: {error}"
        log.error("engine %s left out of rotation: %s", slot.url, error)

    def _step(self, path: str, body: dict) -> None:
        def one(slot):
            try:
                slot.client.post(path, body, timeout_s=self.timeout_s, retries=0)
            except Exception as e:  # noqa: BLE001 - recorded, engine dropped
                self._fail(slot, e)
        for_each_engine(list(self.live), one)

    def _open(self) -> None:
        """The transport for the engines still live: NCCL's broadcast group is rebuilt when
        one was dropped, whose ranks would never join the next broadcast (a hang)."""
        if not self.live:
            return
        try:
            self.transport.open(self.live)
        except Exception as e:  # noqa: BLE001
            for slot in list(self.live):
                self._fail(slot, e)

    def _end_failed_sessions(self) -> None:
        """Best effort: an engine that failed before begin_weight_update, or died, answers
        with an error, which changes nothing."""
        def one(slot):
            try:
                slot.client.post("/end_weight_update", {}, timeout_s=self.timeout_s, retries=0)
            except Exception:  # noqa: BLE001 - the engine stays stale either way
                pass
        for_each_engine([s for s in self.slots if s.url in self.failed], one)

    def run(self, buckets: Iterable[Bucket]) -> List[EngineSlot]:
        """Publish every bucket; returns the engines now serving `version`."""
        self._step("/pause_generation", {"mode": self.pause_mode})
        self._step("/flush_cache", {})
        self._step("/begin_weight_update", {"selector": "all"})
        try:
            for bucket in buckets:  # drained even when every engine failed
                self._open()
                if self.live:
                    self.transport.send(bucket, list(self.live), self._fail)
        except BaseException as e:
            for slot in list(self.live):
                self._fail(slot, e)
            self._end_failed_sessions()
            raise
        self._step("/end_weight_update", {})
        self._end_failed_sessions()
        self._step("/update_weight_version", {"new_version": str(self.version),
                                              "abort_all_requests": False})
        self._step("/continue_generation", {})
        for slot in self.live:
            slot.state, slot.reason, slot.weight_version = UP, "", self.version
        if not self.live:
            raise PublishError(
                f"no engine took weights v{self.version}: "
                + "; ".join(f"{u}: {r}" for u, r in self.failed.items()))
        return self.live
