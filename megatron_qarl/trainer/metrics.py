"""Where numbers go: a JSONL file (one object per event, flushed at once so a crash loses
nothing written), wandb when --wandb-project is given (offline unless configured), and a
one-line console summary beside the progress bar."""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from contextlib import contextmanager
from typing import Dict, Optional

import torch

log = logging.getLogger(__name__)


def _plain(value):
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN/inf; keep them visible rather than dropping them
    return value


class PhaseTimer:
    """Seconds per named phase (rollout, old_logprobs, train, publish) of one step."""

    def __init__(self):
        self.seconds: Dict[str, float] = {}

    @contextmanager
    def phase(self, name: str):
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        start = time.perf_counter()
        try:
            yield
        finally:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def metrics(self) -> Dict[str, float]:
        return {f"time/{k}": v for k, v in self.seconds.items()}


class MetricsLogger:
    def __init__(self, path: str, *, enabled: bool, wandb_project: Optional[str] = None,
                 wandb_name: Optional[str] = None, wandb_dir: Optional[str] = None,
                 config: Optional[dict] = None, resume_mark: Optional[dict] = None,
                 resumed: bool = False, sft_steps: int = 0):
        """Only the rank that logs (enabled) opens files or wandb. resume_mark: the mark()
        a resumed checkpoint saved; the records logged after it are dropped, since the resumed
        run logs those steps again, and wandb continues the run it names. A file that does
        not begin with the marked records is not that checkpoint's (a warm start's checkpoint
        copied into a new run's folder, a file edited since), and neither is one in a run
        that resumed nothing: its records are moved aside to path.N, not appended to (a run
        stopped before its first save left them), and wandb starts a run of its own. A resumed
        checkpoint without a mark (before 2026-12-01) appends. sft_steps: wandb ignores a step
        below its last, so its step axis holds the warm start's steps first (1..sft_steps)
        and the RL events' after them (sft_steps + step, in a run of its own too); each
        event's charts use its own `<event>/step`."""
        self.path, self.enabled, self.wandb = path, enabled, None
        self.sft_steps, self._wandb_axes = sft_steps, set()
        if not enabled:
            return
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        kept = self._resume_at(resume_mark) if resume_mark else None
        if kept is None:
            if resume_mark or not resumed:
                _move_aside(path, "not the resumed checkpoint's" if resume_mark else
                            "of a run that resumed no checkpoint (one stopped before its "
                            "first save)")
                resume_mark = None
            kept = _read(path)
        self._hash, self._bytes = hashlib.sha1(kept), len(kept)
        self.file = open(path, "ab")
        if wandb_project:
            import wandb  # optional extra: megatron-qarl[wandb]

            configured = os.environ.get("WANDB_MODE") or os.environ.get("WANDB_API_KEY")
            # a resume continues the checkpoint's wandb run (each resume started a new one);
            # wandb keeps its own values of steps it had past the checkpoint (metrics.jsonl
            # holds the resumed run's)
            run_id = (resume_mark or {}).get("wandb_id")
            self.wandb = wandb.init(project=wandb_project, name=wandb_name, dir=wandb_dir,
                                    config=config, mode=None if configured else "offline",
                                    **({"id": run_id, "resume": "allow"} if run_id else {}))

    def _resume_at(self, mark: dict) -> Optional[bytes]:
        """The file cut back to `mark` (atomically), or None where it does not begin with the
        marked records."""
        text = _read(self.path)
        kept = text[:mark["bytes"]]
        if len(kept) < mark["bytes"] or hashlib.sha1(kept).hexdigest() != mark["sha1"]:
            return None
        if len(text) > len(kept):
            with open(self.path + ".tmp", "wb") as f:
                f.write(kept)
                f.flush()
                os.fsync(f.fileno())
            os.replace(self.path + ".tmp", self.path)
            log.info("%s: dropped %d records logged after the resumed checkpoint", self.path,
                     text[len(kept):].count(b"\n"))
        return kept

    def mark(self) -> Optional[dict]:
        """Where the file stands (its length and hash) and the wandb run: a checkpoint saves it
        for resume_mark."""
        if not self.enabled:
            return None
        return {"bytes": self._bytes, "sha1": self._hash.hexdigest(),
                "wandb_id": None if self.wandb is None else self.wandb.id}

    def log(self, event: str, step: int, values: Dict[str, object]) -> None:
        if not self.enabled:
            return
        record = {"event": event, "step": step, "time": time.time(),
                  **{k: _plain(v) for k, v in values.items()}}
        line = (json.dumps(record) + "\n").encode("utf-8")
        self.file.write(line)
        self.file.flush()
        self._hash.update(line)
        self._bytes += len(line)
        if self.wandb is not None:
            if event not in self._wandb_axes:
                self.wandb.define_metric(f"{event}/step")
                self.wandb.define_metric(f"{event}/*", step_metric=f"{event}/step")
                self._wandb_axes.add(event)
            numeric = {f"{event}/{k}": v for k, v in record.items()
                       if isinstance(v, (int, float)) and k not in ("step", "time")}
            self.wandb.log({**numeric, f"{event}/step": step},
                           step=step if event == "sft" else self.sft_steps + step)

    def close(self) -> None:
        if self.enabled:
            self.file.close()
            if self.wandb is not None:
                self.wandb.finish()


def _move_aside(path: str, whose: str) -> None:
    """The file, if it holds records, to the first free path.N."""
    if not _read(path):
        log.info("%s: this run's records start here", path)
        return
    n = 1
    while os.path.exists(f"{path}.{n}"):
        n += 1
    os.replace(path, f"{path}.{n}")
    log.warning("%s held records %s; moved them to %s", path, whose, f"{path}.{n}")


def _read(path: str) -> bytes:
    if not os.path.exists(path):
        return b""
    with open(path, "rb") as f:
        return f.read()


def console_line(step: int, values: Dict[str, object]) -> str:
    keys = ("reward_mean", "response_length_mean", "pg_loss", "mismatch_abs_log_w_token",
            "error_resp_frac", "tokens_per_s")
    shown = [f"{k}={float(values[k]):.4g}" for k in keys if k in values]  # nan as nan
    return f"step {step}: " + " ".join(shown)
