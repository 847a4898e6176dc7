"""A run starts from a converted HF model (--pretrained-checkpoint): the weights it trains
are the checkpoint's, a re-run into the same folder resumes instead, and a checkpoint of
another model is named before any tensor is read. Until 2026-12-01 the trainer could only
resume its own checkpoints, so the Qwen3-30B-A3B example trained a random initialisation."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "trainer"))
from trainer_runs import checkpoint_tensors, records, train  # noqa: E402

# the char tokenizer's 98 symbols padded to the tiny HF model's 256 embedding rows
VOCAB_256 = ["--make-vocab-size-divisible-by", "256"]


def test_a_converted_hf_model_starts_the_run_and_a_rerun_resumes(megatron_dir, tmp_path):
    save = tmp_path / "run"
    flags = ["--save", str(save), "--load", str(save), "--pretrained-checkpoint", megatron_dir,
             "--sft-iters", "0", "--lr", "1e-6", *VOCAB_256]
    first = train(*flags, "--train-iters", "1")
    assert f"starting from the model weights of {megatron_dir}" in first.stderr
    converted = checkpoint_tensors(megatron_dir, tmp_path / "converted")
    trained = checkpoint_tensors(str(save / "iter_0000001"), tmp_path / "trained")
    moved = 0
    for key, weight in converted.items():
        step = (trained[key].float() - weight.float()).abs().max().item()
        assert step <= 3e-6, (key, step)  # one Adam step of lr 1e-6 from the converted weights
        moved += step > 0
    assert moved >= len(converted) // 2

    again = train(*flags, "--train-iters", "2")
    assert "resumed from" in again.stderr and "starting from" not in again.stderr
    assert [r["step"] for r in records(save / "metrics.jsonl")] == [1, 2]
    # the first run's final eval and summary came after its checkpoint: the resume drops them
    assert [r["step"] for r in records(save / "metrics.jsonl", "summary")] == [2]

    # a training checkpoint (optimizer and RNG state beside the weights) starts a run too: its
    # extra tensors were taken for missing ones, and every training checkpoint was refused
    other = tmp_path / "other"
    from_training = train("--save", str(other), "--pretrained-checkpoint",
                          str(save / "iter_0000002"), "--sft-iters", "0", "--lr", "1e-6",
                          *VOCAB_256, "--train-iters", "1")
    assert f"starting from the model weights of {save / 'iter_0000002'}" in from_training.stderr
    restarted = checkpoint_tensors(str(other / "iter_0000001"), tmp_path / "restarted")
    second = checkpoint_tensors(str(save / "iter_0000002"), tmp_path / "second")
    for key in converted:  # the model's weights (the checkpoints hold Adam's moments too)
        step = (restarted[key].float() - second[key].float()).abs().max().item()
        assert step <= 3e-6, (key, step)


def test_a_pretrained_checkpoint_of_another_model_is_named(megatron_dir, tmp_path):
    proc = train("--save", str(tmp_path / "run"), "--pretrained-checkpoint", megatron_dir,
                 check=False)  # the char tokenizer's own 128 rows
    assert proc.returncode == 1
    assert f"checkpoint {megatron_dir} holds another model than this run builds: vocab_size " \
           f"256 there, 128 here" in proc.stderr
    assert not (tmp_path / "run" / "iter_0000000").exists()


def _saved_config(tmp_path, edit=lambda c: None):
    """The tiny preset's config.json as transformers 5 writes it (rope_parameters), edited,
    in a checkpoint's hf_assets/; and the config this run builds."""
    from megatron_qarl.checkpoint.model_preset import hf_config_from_preset
    from megatron_qarl.models import QWEN3_MOE_TINY

    here = hf_config_from_preset(QWEN3_MOE_TINY)
    saved = {k: v for k, v in here.items() if k != "rope_theta"}
    saved["rope_parameters"] = {"rope_theta": here["rope_theta"], "rope_type": "default"}
    edit(saved)
    (tmp_path / "hf_assets").mkdir()
    (tmp_path / "hf_assets" / "config.json").write_text(json.dumps(saved))
    return str(tmp_path), here


@pytest.mark.parametrize("edit, message", [
    (lambda c: c["rope_parameters"].update(rope_theta=10000.0),
     r"rope_theta 10000.0 there, 1000000.0 here \(--model\)"),
    (lambda c: c.update(num_experts_per_tok=1), "num_experts_per_tok 1 there, 2 here"),
    (lambda c: c.update(rope_scaling={"rope_type": "yarn", "factor": 4.0}),
     "holds a model this trainer does not build: .*RoPE scaling"),
])
def test_a_saved_model_of_another_computation_is_named(tmp_path, edit, message):
    """Only the shapes were compared: a checkpoint of another RoPE base, top-k or YaRN
    scaling started the run as the preset's model (a review)."""
    from megatron_qarl.trainer.checkpointing import CheckpointError, _check_saved_model

    folder, here = _saved_config(tmp_path, edit)
    with pytest.raises(CheckpointError, match=message):
        _check_saved_model(folder, here)


def test_the_same_model_written_by_transformers_5_is_taken(tmp_path):
    from megatron_qarl.trainer.checkpointing import _check_saved_model

    _check_saved_model(*_saved_config(tmp_path))


@pytest.mark.parametrize("field, value, flag", [
    ("hidden_size", 64, "--hidden-size"), ("num_experts", 8, "--num-experts"),
    ("num_hidden_layers", 3, "--num-layers"), ("num_attention_heads", 8, "--model"),
    ("num_key_value_heads", 4, "--model"), ("head_dim", 64, "--model"),
    ("moe_intermediate_size", 64, "--model"), ("rms_norm_eps", 1e-5, "--model"),
    ("vocab_size", 512, "--tokenizer-type"),
])
def test_each_model_field_names_its_flag(tmp_path, field, value, flag):
    """Every field that makes the model is compared, not only the ones a review hit first: a
    field left out is found only deep in the load, as a shape mismatch naming Megatron keys."""
    from megatron_qarl.trainer.checkpointing import CheckpointError, _check_saved_model

    folder, here = _saved_config(tmp_path, lambda c: c.update({field: value}))
    with pytest.raises(CheckpointError, match=rf"{field} {value} there, {here[field]} here "
                                              rf"\({flag}"):
        _check_saved_model(folder, here)
