"""How bucket bytes reach the engines.

CUDA IPC (colocated: the trainer's sending rank and the engines share a node): the bucket's
GPU buffer travels as an IPC handle inside the /update_weights_from_tensor payload.

NCCL broadcast (disaggregated: engines on their own GPUs or nodes): the engines and the
sending rank form one extra process group (rank 0 = sender, engine e's TP ranks follow);
each bucket is announced by /update_weights_from_distributed and broadcast from rank 0.
The group is built with SGLang's `init_custom_process_group`, the helper the server uses
for its side, with the control timeout: an engine that fails before it joins a broadcast
leaves that broadcast waiting for its ranks, and the timeout bounds the wait (NCCL's watchdog
then ends the process with its error) where the helper's default, torch's default_pg_timeout,
is 30 minutes. Neither path can run here (no GPU, no SGLang server): written against the
0.5.23 API, see docs/sglang.md.
"""
from __future__ import annotations

import datetime
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import List

from ..publish.buckets import Bucket
from .payload import distributed_update_body, sglang_bucket, tensor_update_body
from .pool import EngineSlot, for_each_engine

IPC, NCCL = "ipc", "nccl"
TRANSFER_FLAG = "--rollout-weight-transfer"
GROUP_NAME = "qarl_weight_update"


class IpcTransport:
    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s

    def open(self, slots: List[EngineSlot]) -> None:
        """Nothing to set up: each payload carries its own handles."""

    def send(self, bucket: Bucket, slots: List[EngineSlot], on_error) -> None:
        flat = sglang_bucket(bucket)  # one GPU copy, alive until every engine has returned

        def one(slot):
            try:
                slot.client.post("/update_weights_from_tensor",
                                 tensor_update_body(flat, slot.tp_size),
                                 timeout_s=self.timeout_s, retries=0)
            except Exception as e:  # noqa: BLE001 - reported per engine by the session
                on_error(slot, e)
        for_each_engine(slots, one)

    def close(self, slots: List[EngineSlot]) -> None:
        """Nothing held between publishes."""


class NcclTransport:
    def __init__(self, master_address: str, master_port: int, timeout_s: float):
        self.master_address, self.master_port = master_address, master_port
        self.timeout_s = timeout_s
        self.group = None
        self._members: List[str] = []

    def open(self, slots: List[EngineSlot]) -> None:
        """(Re)build the group when the set of engines changed since the last publish."""
        urls = [s.url for s in slots]
        if self.group is not None and urls == self._members:
            return
        self.close(slots)
        from sglang.srt.utils import init_custom_process_group  # the sglang extra

        world = 1 + sum(s.tp_size for s in slots)
        offsets = [1 + sum(s.tp_size for s in slots[:i]) for i in range(len(slots))]
        errors = []

        def join(slot, offset):  # blocks on the server until every rank joined
            try:
                slot.client.post("/init_weights_update_group", {
                    "master_address": self.master_address, "master_port": self.master_port,
                    "rank_offset": offset, "world_size": world, "group_name": GROUP_NAME,
                    "backend": "nccl"}, timeout_s=self.timeout_s, retries=0)
            except Exception as e:  # noqa: BLE001
                errors.append((slot, e))
        threads = [threading.Thread(target=join, args=a, daemon=True)
                   for a in zip(slots, offsets)]
        for t in threads:
            t.start()
        self.group = init_custom_process_group(
            backend="nccl", init_method=f"tcp://{self.master_address}:{self.master_port}",
            timeout=datetime.timedelta(seconds=self.timeout_s), world_size=world, rank=0,
            group_name=GROUP_NAME)
        for t in threads:
            t.join()
        if errors:
            raise errors[0][1]
        self._members = urls

    def send(self, bucket: Bucket, slots: List[EngineSlot], on_error) -> None:
        import torch.distributed as dist

        flat = bucket.flatten()
        body = distributed_update_body(bucket, GROUP_NAME)

        def announce(slot):
            try:
                slot.client.post("/update_weights_from_distributed", body,
                                 timeout_s=self.timeout_s, retries=0)
            except Exception as e:  # noqa: BLE001
                on_error(slot, e)
        with ThreadPoolExecutor(max_workers=len(slots)) as ex:
            pending = [ex.submit(announce, s) for s in slots]
            dist.broadcast(flat, src=0, group=self.group)
            for p in pending:
                p.result()

    def close(self, slots: List[EngineSlot]) -> None:
        if self.group is None:
            return
        import torch.distributed as dist

        for slot in slots:
            if slot.url in self._members:
                try:
                    slot.client.post("/destroy_weights_update_group",
                                     {"group_name": GROUP_NAME}, retries=0)
                except Exception:  # noqa: BLE001 - a dead engine has no group left to destroy
                    pass
        dist.destroy_process_group(self.group)
        self.group, self._members = None, []


def make_transport(kind: str, timeout_s: float, master_address: str = "",
                   master_port: int = 0):
    if kind == IPC:
        return IpcTransport(timeout_s)
    if kind == NCCL:
        if not master_address or not master_port:
            raise ValueError(f"{TRANSFER_FLAG} nccl needs --rollout-nccl-master-address and "
                             f"--rollout-nccl-master-port (an address of the sending rank "
                             f"the engines can reach, and a free port)")
        return NcclTransport(master_address, master_port, timeout_s)
    raise ValueError(f"{TRANSFER_FLAG} must be '{IPC}' (colocated) or '{NCCL}' "
                     f"(disaggregated), got {kind!r}")
