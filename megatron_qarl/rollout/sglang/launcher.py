"""Start SGLang servers (`python -m sglang.launch_server`) for the rollout: colocated with
training on the same GPUs (memory saver on, a small static memory fraction) or on GPUs of
their own, with TP/EP and routed-experts capture as asked. Written against SGLang 0.5.23's
CLI; not run here (no GPU)."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from .http_client import EngineClient


@dataclass(frozen=True)
class LaunchSpec:
    model_path: str  # an HF directory with the serving quantization_config (tools/ export)
    num_engines: int = 1
    tp_size: int = 1
    ep_size: int = 1
    base_gpu_id: int = 0  # first GPU of engine 0; engine e starts at base + e * tp_size
    colocated: bool = True
    mem_fraction_static: float = 0.5
    host: str = "127.0.0.1"
    port: int = 30000  # engine e listens on port + e
    routed_experts: bool = False
    deterministic: bool = False  # --deterministic-mode: SGLang's batch-invariant kernels
    extra_args: Sequence[str] = field(default_factory=tuple)

    def __post_init__(self):
        if self.num_engines < 1:
            raise ValueError(f"--sglang-num-engines must be >= 1, got {self.num_engines}")
        if self.tp_size < 1 or self.ep_size < 1 or self.tp_size % self.ep_size:
            raise ValueError(
                f"--sglang-tp-size {self.tp_size} / --sglang-ep-size {self.ep_size}: SGLang "
                f"runs expert parallelism inside the TP group, so ep must divide tp")
        if not 0 < self.mem_fraction_static < 1:
            raise ValueError(f"--sglang-mem-fraction-static must be in (0, 1), got "
                             f"{self.mem_fraction_static}")

    def url(self, engine: int) -> str:
        return f"http://{self.host}:{self.port + engine}"


def server_command(spec: LaunchSpec, engine: int) -> List[str]:
    cmd = [sys.executable, "-m", "sglang.launch_server",
           "--model-path", spec.model_path,
           "--host", spec.host, "--port", str(spec.port + engine),
           "--tp-size", str(spec.tp_size), "--ep-size", str(spec.ep_size),
           "--dp-size", "1",  # weight updates need dp_size 1: one engine per replica
           "--base-gpu-id", str(spec.base_gpu_id + engine * spec.tp_size),
           "--mem-fraction-static", str(spec.mem_fraction_static),
           "--weight-version", "0",
           "--skip-server-warmup"]
    if spec.colocated:
        cmd.append("--enable-memory-saver")
    if spec.routed_experts:
        cmd.append("--enable-return-routed-experts")
    if spec.deterministic:
        cmd.append("--enable-deterministic-inference")
    return cmd + list(spec.extra_args)


class ServerProcess:
    """One launched server; its output goes to `log_path`."""

    def __init__(self, spec: LaunchSpec, engine: int, log_dir: str):
        self.spec, self.engine = spec, engine
        self.log_path = os.path.join(log_dir, f"sglang_engine{engine}.log")
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> None:
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(server_command(self.spec, self.engine), stdout=log,
                                         stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_healthy(self, client: EngineClient, timeout_s: float) -> None:
        try:
            client.wait_healthy(timeout_s, alive=self.alive)
        except Exception as e:
            raise type(e)(f"{e}; server log: {self.log_path}") from e

    def stop(self, timeout_s: float = 30.0) -> None:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
