"""Start SGLang servers (`python -m sglang.launch_server`) for the rollout: colocated with
training on the same GPUs (memory saver on, a small static memory fraction) or on GPUs of
their own, with TP/EP and routed-experts capture as asked. Written against SGLang 0.5.23's
CLI; not run here (no GPU)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from .errors import EngineUnavailable
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


#: runs the server command (argv[2:]) with the kernel's parent-death signal set (Linux prctl
#: PR_SET_PDEATHSIG = 1; kept across exec): a trainer killed outright (SIGKILL, the OOM
#: killer) no longer leaves its servers holding their GPUs, and SGLang's launcher stops its
#: own workers on that SIGTERM. A parent (argv[1]) gone before the prctl is seen after it.
#: The signal follows the thread that started the server: the engine starts them from the
#: thread that builds it, the trainer's main thread.
_STOP_WITH_PARENT = ("import ctypes, os, signal, sys\n"
                     "if sys.platform.startswith('linux') and "
                     "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM):\n"
                     "    print('could not set the parent-death signal: this server will "
                     "outlive a killed trainer', file=sys.stderr)\n"
                     "if os.getppid() != int(sys.argv[1]):\n"
                     "    sys.exit('the trainer that launched this server is gone')\n"
                     "os.execv(sys.argv[2], sys.argv[2:])")


def require_free_port(host: str, port: int) -> None:
    """SGLang binds its HTTP port only after loading the model, and /health would meanwhile
    be answered by whatever already listens there (a server an earlier run left behind)."""
    with socket.socket() as sock:
        # SGLang binds with SO_REUSEADDR too: a port held only by TIME_WAIT connections (an
        # earlier server's, for a minute after its last request) is free to it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise OSError(f"{host}:{port} is taken ({e.strerror}): a server of an earlier run "
                          f"may still hold it; stop it, or pick free ports with "
                          f"--sglang-port") from None


class ServerProcess:
    """One launched server; its output goes to `log_path`."""

    def __init__(self, spec: LaunchSpec, engine: int, log_dir: str):
        self.spec, self.engine = spec, engine
        self.log_path = os.path.join(log_dir, f"sglang_engine{engine}.log")
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> None:
        require_free_port(self.spec.host, self.spec.port + self.engine)
        os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _STOP_WITH_PARENT, str(os.getpid()),
                 *server_command(self.spec, self.engine)],
                stdout=log, stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_healthy(self, client: EngineClient, timeout_s: float) -> None:
        try:
            client.wait_healthy(timeout_s, alive=self.alive)
            if not self.alive():  # /health answered by another process on its port
                raise EngineUnavailable(f"{client.url}: the server process exited during "
                                        f"start-up")
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
