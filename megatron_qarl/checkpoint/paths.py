"""Checkpoint folder layout, Megatron's: <save>/iter_0000042/ (complete checkpoints only;
one being written is iter_0000042.tmp) and <save>/latest_checkpointed_iteration.txt. The
trainer writes it; the conversion tools read a --save folder through `resolve`."""
from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from typing import Iterator, List, Optional

from .errors import CheckpointError

TRACKER = "latest_checkpointed_iteration.txt"
METADATA = "metadata.json"  # megatron-core's marker of a distributed checkpoint
_STEP_DIR = re.compile(r"^iter_(\d{7})$")
_UNFINISHED_DIR = re.compile(r"^iter_\d{7}\.tmp$")


def step_dir(root: str, step: int) -> str:
    return os.path.join(root, f"iter_{step:07d}")


def available_steps(root: str) -> List[int]:
    """Complete checkpoints under root, oldest first (.tmp folders are not checkpoints)."""
    if not os.path.isdir(root):
        return []
    return sorted(int(m.group(1)) for name in os.listdir(root)
                  if (m := _STEP_DIR.match(name)) and os.path.isdir(os.path.join(root, name)))


def step_of(folder: str) -> Optional[int]:
    """The step of a complete checkpoint's iter_N folder, else None."""
    m = _STEP_DIR.match(os.path.basename(os.path.normpath(folder)))
    return int(m.group(1)) if m and os.path.isdir(folder) else None


def unfinished_saves(root: str) -> List[str]:
    """The iter_N.tmp folders under root: saves that crashed before their rename."""
    if not os.path.isdir(root):
        return []
    return [os.path.join(root, name) for name in os.listdir(root)
            if _UNFINISHED_DIR.match(name)]


def latest_step(root: str) -> int:
    """The tracker's step when it names a complete checkpoint, else the newest folder."""
    steps = available_steps(root)
    tracker = os.path.join(root, TRACKER)
    if os.path.isfile(tracker):
        text = open(tracker).read().strip()
        if text.isdigit() and int(text) in steps:
            return int(text)
    if not steps:
        raise FileNotFoundError(f"{root}: no checkpoint")
    return steps[-1]


def is_megatron(path: str) -> bool:
    """A Megatron distributed checkpoint: one step's folder (a --save folder: `resolve` it)."""
    return os.path.isfile(os.path.join(path, METADATA))


def resolve(path: str) -> str:
    """A checkpoint folder as given, or for a training --save folder (iter_* folders, no
    metadata.json of its own) its latest complete checkpoint."""
    if is_megatron(path) or not available_steps(path):
        return path
    return step_dir(path, latest_step(path))


def require_new_output(out_dir: str) -> None:
    """The converters write config.json, the index and the shards by name: into a folder that
    holds a checkpoint they would leave a mix that loads as neither (an HF model's index
    pointing at the export's shards). Refused before anything is read or written."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise CheckpointError(f"{out_dir}: a file, not a folder; pass a new folder for the "
                              f"output")
    if os.path.exists(out_dir) and os.listdir(out_dir):
        raise CheckpointError(
            f"{out_dir}: the output folder exists and is not empty; writing there would mix "
            f"this checkpoint's files with what it holds. Fix: pass a new folder (or empty "
            f"this one)")


@contextmanager
def new_output(out_dir: str) -> Iterator[str]:
    """The folder a converter writes into: for a new out_dir, out_dir + '.partial', renamed to
    out_dir once the converter is done, so an interrupted conversion leaves no folder that
    looks complete (the trainer's saves do the same with iter_N.tmp); a converter's own error
    removes it, and what a killed run left is named, not deleted. An empty folder given as
    out_dir (".", a link to one) is written in place, and emptied again on an error (the
    shards it left made the rerun's out_dir "not empty"). The converters have checked out_dir
    with require_new_output before reading their input."""
    if os.path.exists(out_dir):
        try:
            yield out_dir
        except BaseException:
            for name in os.listdir(out_dir):
                path = os.path.join(out_dir, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            raise
        return
    partial = os.path.normpath(out_dir) + ".partial"
    if os.path.exists(partial):
        raise CheckpointError(f"{partial}: left by an interrupted conversion into {out_dir}. "
                              f"Fix: delete it and run again")
    os.makedirs(partial)
    try:
        yield partial
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    os.rename(partial, out_dir)


def require_folder(path: str) -> None:
    """A checkpoint is a folder: say so when the path is missing or names a file."""
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: no such folder")
    if not os.path.isdir(path):
        raise CheckpointError(f"{path}: a file, not a checkpoint folder; pass the folder "
                              f"that holds it")
