"""Checkpoints of model, optimizer and RL state through Megatron's distributed checkpointing,
written atomically: every rank writes into <save>/iter_N.tmp, then rank 0 renames it to
iter_N and only then points latest_checkpointed_iteration.txt at it (write + os.replace).
A crash at any moment leaves the previous checkpoints untouched and at most a .tmp folder,
which is never loaded and is removed by the next save of that step.

RL state: the step, the data position, the warm-start flag (common to all ranks), and each
rank's RNG states (python, torch CPU/CUDA, Megatron's model-parallel tracker, the rollout
sampler's generator) as a sharded object, so a resumed run draws the same next batch.
"""
from __future__ import annotations

import json
import os
import random
import shutil
from typing import List, Optional

import numpy as np
import torch
import torch.distributed as dist
from megatron.core import dist_checkpointing, tensor_parallel
from megatron.core.dist_checkpointing.mapping import ShardedObject
from megatron.core.dist_checkpointing.validation import StrictHandling
from torch.distributed.checkpoint.api import (
    CheckpointException as DCPCheckpointException,
)

from ..checkpoint.errors import CheckpointError as ConfigError, first_failure
from ..checkpoint.hf_config import CONFIG_FILE, dims_from_config, rope_theta
from ..checkpoint.megatron_checkpoint import HF_ASSETS, copy_hf_assets
from ..checkpoint.paths import TRACKER, available_steps, latest_step, step_dir, unfinished_saves


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded; the message names the folder and what to do."""


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _world() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def _barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def rng_state(extra: dict) -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(),
             "torch": torch.get_rng_state(),
             "tracker": tensor_parallel.get_cuda_rng_tracker().get_states(), **extra}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def restore_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    tensor_parallel.get_cuda_rng_tracker().set_states(state["tracker"])
    if "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"])


def _sharded_state(model, optimizer, rl_state: Optional[dict], rng: Optional[dict],
                   is_loading: bool) -> dict:
    model_sd = model.sharded_state_dict()
    state = {"model": model_sd, "rl_state": rl_state,
             "rng_state": ShardedObject("rng_state", rng, (_world(),), (_rank(),), replica_id=0)}
    if optimizer is not None:
        state["optimizer"] = optimizer.sharded_state_dict(model_sd, is_loading=is_loading)
    return state


def write_hf_assets(folder: str, hf_config: dict, tokenizer_dir: Optional[str]) -> None:
    """<folder>/hf_assets/: the HF config.json of the model saved (and an HF tokenizer's
    files), as tools/checkpoint.py hf-to-megatron leaves them, so exporting or converting a
    training checkpoint needs no other input. A tokenizer folder's own config.json keeps its
    other fields; the model's dimensions and vocabulary rows are the saved model's."""
    assets = os.path.join(folder, HF_ASSETS)
    os.makedirs(assets, exist_ok=True)
    if tokenizer_dir:
        copy_hf_assets(tokenizer_dir, assets)
    path = os.path.join(assets, CONFIG_FILE)
    known = {}
    if os.path.isfile(path):
        with open(path) as f:
            known = json.load(f)
    with open(path, "w") as f:
        json.dump({**known, **hf_config}, f, indent=2)


def save_checkpoint(root: str, step: int, model, optimizer, rl_state: dict, rng: dict,
                    hf_config: dict, tokenizer_dir: Optional[str] = None) -> str:
    """model: the unwrapped GPTModel; hf_config: its HF config.json (write_hf_assets);
    returns the checkpoint folder."""
    final, tmp = step_dir(root, step), step_dir(root, step) + ".tmp"
    if _rank() == 0:
        os.makedirs(root, exist_ok=True)
        for folder in unfinished_saves(root):  # of any step: a resumed run may never save
            shutil.rmtree(folder, ignore_errors=True)  # that step again, and each holds GBs
        os.makedirs(tmp)
    _barrier()
    dist_checkpointing.save(_sharded_state(model, optimizer, rl_state, rng, False), tmp)
    _barrier()
    if _rank() == 0:
        write_hf_assets(tmp, hf_config, tokenizer_dir)
        if os.path.exists(final):  # re-running a step after a resume: replace it whole
            shutil.move(final, final + ".old")
        os.rename(tmp, final)
        shutil.rmtree(final + ".old", ignore_errors=True)
        point_tracker_at(root, step)
    _barrier()
    return final


def point_tracker_at(root: str, step: int) -> None:
    """latest_checkpointed_iteration.txt names `step`, replaced atomically."""
    tracker = os.path.join(root, TRACKER)
    with open(tracker + ".tmp", "w") as f:
        f.write(str(step))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tracker + ".tmp", tracker)


# the HF config fields that make the model (its shapes, its routing, RoPE and norms), and the
# flags that set them; what the presets never build (RoPE scaling, sliding windows, ...) is
# refused by the config check itself
_MODEL_FLAGS = {"num_hidden_layers": "--num-layers", "hidden_size": "--hidden-size",
                "num_experts": "--num-experts", "num_attention_heads": "--model",
                "num_key_value_heads": "--model", "head_dim": "--model",
                "moe_intermediate_size": "--model", "num_experts_per_tok": "--model",
                "rms_norm_eps": "--model", "rope_theta": "--model",
                "vocab_size": "--tokenizer-type / --tokenizer-model / "
                              "--make-vocab-size-divisible-by"}


def _check_saved_model(folder: str, hf_config: dict) -> None:
    """A checkpoint that says which model it holds (hf_assets/, written since 2026-12-01) is
    compared with the model these flags build before any tensor is read."""
    path = os.path.join(folder, HF_ASSETS, CONFIG_FILE)
    if not os.path.isfile(path):
        return
    try:
        with open(path) as f:
            saved = json.load(f)
    except json.JSONDecodeError as err:
        raise CheckpointError(
            f"checkpoint {folder}: {path} is not JSON ({err}); the checkpoint is damaged. It "
            f"was left untouched; resume from another step with --ckpt-step") from err
    try:
        dims_from_config(saved, path)
    except ConfigError as err:
        raise CheckpointError(f"checkpoint {folder} holds a model this trainer does not build: "
                              f"{err}. It was left untouched") from None
    saved, here = ({**c, "rope_theta": rope_theta(c)} for c in (saved, hf_config))
    differ = [f"{key} {saved[key]} there, {here[key]} here ({flag})"
              for key, flag in _MODEL_FLAGS.items()
              if key in saved and saved[key] != here.get(key)]
    if differ:
        raise CheckpointError(
            f"checkpoint {folder} holds another model than this run builds: "
            f"{'; '.join(differ)}. Run with the flags it was saved with, or start a new "
            f"--save folder; the checkpoint was left untouched")


def load_model_weights(folder: str, model, hf_config: dict) -> None:
    """A pretrained start (--pretrained-checkpoint): the model's weights only, from a converted
    HF model or a training checkpoint, at any TP/EP; the optimizer, RL state and RNG start
    fresh. model: the unwrapped GPTModel."""
    _check_saved_model(folder, hf_config)
    template = model.sharded_state_dict()
    try:
        # RETURN_ALL's sets: the checkpoint's keys not asked for (a training checkpoint's
        # optimizer and RNG state: fine), and the keys asked for that it lacks
        loaded, _, absent = dist_checkpointing.load(template, folder,
                                                    strict=StrictHandling.RETURN_ALL)
    except (Exception, DCPCheckpointException) as err:  # noqa: BLE001 - the folder is unusable
        raise CheckpointError(
            f"--pretrained-checkpoint {folder} cannot be loaded ({first_failure(err)}); it is "
            f"corrupt, incomplete or of another model. It was left untouched") from err
    if absent:
        raise CheckpointError(
            f"--pretrained-checkpoint {folder} lacks {len(absent)} of this model's tensors "
            f"({', '.join(sorted(absent)[:3])}, ...): it holds another model; check the "
            f"--model flags against its hf_assets/config.json. It was left untouched")
    model.load_state_dict({key: value for key, value in loaded.items() if key in template})


def settings_that_differ(saved: Optional[dict], here: dict) -> List[str]:
    """'KEY SAVED there, HERE here' for each setting a checkpoint saved with another value."""
    return [f"{key} {saved[key]} there, {value} here" for key, value in here.items()
            if saved is not None and key in saved and saved[key] != value]


def _check_saved_layout(folder: str, layout: dict) -> None:
    """The parallel layout and optimizer a checkpoint was saved with (its rl_state's, since
    2026-12-01) against this run's, before any tensor is read: another one failed deep in the
    load, naming RNG shards or optimizer keys, or blaming the vocabulary for TP's padding."""
    try:
        saved = dist_checkpointing.load_common_state_dict(folder)["rl_state"]["layout"]
    except Exception:  # noqa: BLE001 - older or damaged: the full load reports the latter
        return
    differ = settings_that_differ(saved, layout)
    if differ:
        raise CheckpointError(
            f"checkpoint {folder} was saved with another parallel layout or optimizer: "
            f"{'; '.join(differ)}. Resume it with the ones it was saved with, or start a new "
            f"run from its model weights at any layout: --pretrained-checkpoint {folder} with "
            f"a new --save (and no --load); it was left untouched")


def load_checkpoint(root: str, step: Optional[int], model, optimizer,
                    hf_config: Optional[dict] = None, layout: Optional[dict] = None):
    """Load into model/optimizer in place; returns (step, rl_state, this rank's rng state).
    hf_config: the HF config.json of the model built; layout: this run's parallel sizes and
    optimizer (RLTrainer._layout); each checked against the saved one."""
    step = latest_step(root) if step is None else step
    folder = step_dir(root, step)
    if hf_config is not None:
        _check_saved_model(folder, hf_config)
    if layout is not None:
        _check_saved_layout(folder, layout)
    template = _sharded_state(model, optimizer, None, None, True)
    try:
        loaded = dist_checkpointing.load(template, folder)
        model.load_state_dict(loaded["model"])
        if optimizer is not None:
            optimizer.load_state_dict(loaded["optimizer"])
    # torch's DCP raises CheckpointException, a BaseException, for unreadable shards.
    except (Exception, DCPCheckpointException) as err:  # noqa: BLE001 - the folder is unusable
        earlier = [s for s in available_steps(root) if s < step]
        hint = (f"if it is damaged, resume from an earlier one with --ckpt-step {earlier[-1]} "
                f"(available: {', '.join(map(str, earlier))})" if earlier
                else "no earlier checkpoint exists")
        raise CheckpointError(
            f"checkpoint {folder} cannot be loaded ({first_failure(err)}); it is corrupt, "
            f"incomplete or from another model/parallel layout. It was left untouched. If the "
            f"model flags changed since it was saved, run with the ones it was saved with; "
            f"{hint}"
        ) from err
    rl_state = loaded["rl_state"]
    if not isinstance(rl_state, dict) or rl_state.get("step") != step:
        raise CheckpointError(f"checkpoint {folder}: RL state is missing or names another step")
    return step, rl_state, loaded["rng_state"]
