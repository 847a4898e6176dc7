"""The trainer's save and load (megatron_qarl/trainer/checkpointing.py) in process, on the
converted tiny model: what tests/trainer/test_resume.py's runs do not reach (a mutation
review, 2026-12-02): a re-saved step replaces the old folder whole, a step folder must hold its
own step's RL state, every generator comes back, a pretrained start that lacks tensors is
named, and a setting an older checkpoint did not save is no difference."""
import json
import os
import random
import shutil

import numpy as np
import pytest
import torch
from megatron.core import tensor_parallel
from megatron.core.dist_checkpointing import ShardedTensor

from megatron_qarl.checkpoint.paths import TRACKER
from megatron_qarl.trainer import checkpointing as ck
from megatron_runs import load_model


@pytest.fixture(scope="module")
def model(megatron_dir):
    return load_model(megatron_dir)


@pytest.fixture(scope="module")
def config(megatron_dir):
    with open(os.path.join(megatron_dir, "hf_assets", "config.json")) as f:
        return json.load(f)


def test_a_resaved_step_replaces_its_folder_and_holds_its_own_step(model, config, tmp_path):
    """A step saved again after a resume replaces the old folder whole (none of its files, no
    .old copy left behind); the tracker names the step; a folder whose RL state names another
    step is refused."""
    root = tmp_path / "save"
    old = root / "iter_0000001"
    old.mkdir(parents=True)
    (old / "__0_0.distcp").write_text("the earlier run's shard")
    (root / "iter_0000004.tmp").mkdir()  # a crashed save of another step
    folder = ck.save_checkpoint(str(root), 1, model, None, {"step": 1}, ck.rng_state({}), config)
    assert folder == str(old)
    assert sorted(os.listdir(root)) == ["iter_0000001", TRACKER]
    assert (root / TRACKER).read_text() == "1"
    assert (old / "__0_0.distcp").read_bytes() != b"the earlier run's shard"
    step, rl_state, rng = ck.load_checkpoint(str(root), None, model, None, config)
    assert (step, rl_state) == (1, {"step": 1})
    shutil.copytree(old, root / "iter_0000003")
    with pytest.raises(ck.CheckpointError, match="iter_0000003: RL state is missing or names "
                                                 "another step"):
        ck.load_checkpoint(str(root), 3, model, None, config)


def _draws():
    with tensor_parallel.get_cuda_rng_tracker().fork():
        tracked = torch.rand(2).tolist()
    return random.random(), float(np.random.rand()), torch.rand(2).tolist(), tracked


def test_every_generator_comes_back(model):
    """python, numpy, torch and Megatron's tracker: a resume draws what the run would have."""
    state = ck.rng_state({"engine": {"seed": 5}})
    assert state["engine"] == {"seed": 5}
    first = _draws()
    ck.restore_rng_state(state)
    assert _draws() == first


def test_a_pretrained_checkpoint_that_lacks_tensors_is_named(model, config, megatron_dir,
                                                             monkeypatch):
    ck.load_model_weights(megatron_dir, model, config)
    own = model.sharded_state_dict

    def with_one_more():
        state = own()
        state["extra"] = ShardedTensor.from_rank_offsets("decoder.not_saved", torch.zeros(2),
                                                         replica_id=0)
        return state

    monkeypatch.setattr(model, "sharded_state_dict", with_one_more)
    with pytest.raises(ck.CheckpointError, match=r"lacks 1 of this model's tensors "
                                                 r"\(decoder\.not_saved, \.\.\.\)"):
        ck.load_model_weights(megatron_dir, model, config)


def test_a_setting_an_older_checkpoint_did_not_save_is_no_difference():
    here = {"--lr": 3e-4, "--loss": "grpo"}
    assert ck.settings_that_differ(None, here) == []
    assert ck.settings_that_differ({"--lr": 3e-4}, here) == []
    assert ck.settings_that_differ({"--lr": 1e-3, "--loss": "grpo"}, here) == \
        ["--lr 0.001 there, 0.0003 here"]
