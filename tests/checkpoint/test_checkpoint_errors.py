"""Broken inputs fail before any output is written, with the file, the tensor and the fix."""
import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from megatron_qarl.checkpoint import CheckpointError, compare, hf_to_megatron, megatron_to_hf


@pytest.fixture
def broken(hf_dir, tmp_path):
    """A private copy of the tiny HF checkpoint to damage, and where output would go."""
    src = str(tmp_path / "hf")
    shutil.copytree(hf_dir, src)
    return src, str(tmp_path / "out")


def _shard_of(directory, name):
    with open(os.path.join(directory, "model.safetensors.index.json")) as f:
        return os.path.join(directory, json.load(f)["weight_map"][name])


def _rewrite(path, change):
    tensors = load_file(path)
    change(tensors)
    save_file(tensors, path, metadata={"format": "pt"})


def _edit_config(directory, change):
    path = os.path.join(directory, "config.json")
    with open(path) as f:
        config = json.load(f)
    change(config)
    with open(path, "w") as f:
        json.dump(config, f)


NAME = "model.layers.1.mlp.experts.2.up_proj.weight"


def test_tensor_missing_from_its_shard(broken):
    src, out = broken
    shard = _shard_of(src, NAME)
    _rewrite(shard, lambda t: t.pop(NAME))
    with pytest.raises(CheckpointError) as e:
        hf_to_megatron(src, out, progress=False)
    assert shard in str(e.value) and NAME in str(e.value)
    assert not os.path.exists(out)


def test_tensor_missing_from_the_checkpoint(broken):
    src, out = broken
    shard = _shard_of(src, NAME)
    _rewrite(shard, lambda t: t.pop(NAME))
    index = os.path.join(src, "model.safetensors.index.json")
    with open(index) as f:
        data = json.load(f)
    del data["weight_map"][NAME]
    with open(index, "w") as f:
        json.dump(data, f)
    with pytest.raises(CheckpointError, match=rf"{src}: 1 tensors .* missing, first '{NAME}'"):
        hf_to_megatron(src, out, progress=False)


def test_wrong_shape(broken):
    src, out = broken
    shard = _shard_of(src, NAME)
    _rewrite(shard, lambda t: t.__setitem__(NAME, torch.zeros(64, 128, dtype=torch.bfloat16)))
    with pytest.raises(CheckpointError) as e:
        hf_to_megatron(src, out, progress=False)
    msg = str(e.value)
    assert shard in msg and NAME in msg and "[64, 128]" in msg and "[128, 128]" in msg


def test_truncated_file_names_the_file_and_the_cut_tensor(broken):
    src, out = broken
    shard = _shard_of(src, NAME)
    with open(shard, "r+b") as f:
        f.truncate(os.path.getsize(shard) - 1000)
    with pytest.raises(CheckpointError, match="is truncated") as e:
        hf_to_megatron(src, out, progress=False)
    assert shard in str(e.value) and "model.layers" in str(e.value)


def test_missing_config(broken):
    src, out = broken
    os.remove(os.path.join(src, "config.json"))
    with pytest.raises(CheckpointError, match=rf"{src}/config.json: not found"):
        hf_to_megatron(src, out, progress=False)


def test_config_of_another_model(broken):
    src, out = broken
    _edit_config(src, lambda c: c.update(model_type="qwen2_moe"))
    with pytest.raises(CheckpointError, match="config.json: model_type is 'qwen2_moe'"):
        hf_to_megatron(src, out, progress=False)


def test_config_missing_a_dimension(broken):
    src, out = broken
    _edit_config(src, lambda c: c.pop("head_dim"))
    with pytest.raises(CheckpointError, match="config.json: missing head_dim"):
        hf_to_megatron(src, out, progress=False)


def test_config_of_another_size(broken):
    src, out = broken
    _edit_config(src, lambda c: c.update(moe_intermediate_size=256))
    with pytest.raises(CheckpointError, match="gate_proj.weight' has shape .* expected "
                                              r"\[256, 128\] from config.json"):
        hf_to_megatron(src, out, progress=False)


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(num_hidden_layers=1), r"tensors that the Qwen3-MoE model .* does not "
                                              r"have, first 'model\.layers\.1\."),
    (lambda c: c.update(attention_bias=True), "attention_bias is true"),
])
def test_tensors_the_config_does_not_name_are_refused(broken, edit, message):
    """A config of fewer layers converted a truncated model, and one with attention biases
    dropped them; compare, reading only the mapped names, saw no difference."""
    src, out = broken
    _edit_config(src, edit)
    with pytest.raises(CheckpointError, match=message):
        hf_to_megatron(src, out, progress=False)
    assert not os.path.exists(out)


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(norm_topk_prob=False), "norm_topk_prob is False"),
    (lambda c: c.pop("norm_topk_prob"), "norm_topk_prob is absent"),
    (lambda c: c.update(rope_scaling={"rope_type": "yarn", "factor": 4.0}), "RoPE scaling"),
    (lambda c: c.update(rope_parameters={"rope_type": "yarn", "rope_theta": 1e6}),
     "RoPE scaling"),
    (lambda c: c.update(use_sliding_window=True), "use_sliding_window is true"),
    (lambda c: c.update(hidden_act="gelu"), "hidden_act is 'gelu'"),
])
def test_configs_of_another_computation_are_refused(broken, edit, message):
    """Fields that change no tensor's shape converted, loaded and trained as another model
    (HF's logits against the Megatron model's: 0.05-1.2 apart; a review)."""
    src, out = broken
    _edit_config(src, edit)
    with pytest.raises(CheckpointError, match=f"config.json: {message}"):
        hf_to_megatron(src, out, progress=False)
    assert not os.path.exists(out)


def test_a_preset_names_the_fields_it_lacks():
    from megatron_qarl.checkpoint.model_preset import hf_config_from_preset, preset_from_hf_config
    from megatron_qarl.models import QWEN3_MOE_TINY

    config = hf_config_from_preset(QWEN3_MOE_TINY)
    del config["num_experts_per_tok"], config["max_position_embeddings"]
    with pytest.raises(CheckpointError, match="missing num_experts_per_tok, "
                                              "max_position_embeddings"):
        preset_from_hf_config(config)


def test_a_tied_config_for_an_untied_checkpoint_is_refused(megatron_dir, tmp_path):
    """megatron-to-hf under a config with tie_word_embeddings dropped the trained lm_head."""
    ckpt = str(tmp_path / "megatron")
    shutil.copytree(megatron_dir, ckpt)
    _edit_config(os.path.join(ckpt, "hf_assets"), lambda c: c.update(tie_word_embeddings=True))
    with pytest.raises(CheckpointError, match=r"holds output_layer\.weight .*"
                                              r"tie_word_embeddings"):
        megatron_to_hf(ckpt, str(tmp_path / "out"), progress=False)


def test_layout_that_cannot_load_the_model(hf_dir, tmp_path):
    with pytest.raises(CheckpointError, match="--expert-model-parallel-size 3.*num_experts 4"):
        hf_to_megatron(hf_dir, str(tmp_path / "out"), expert_parallel=3, progress=False)


def test_megatron_checkpoint_without_its_config(megatron_dir, tmp_path):
    ckpt = str(tmp_path / "megatron")
    shutil.copytree(megatron_dir, ckpt)
    shutil.rmtree(os.path.join(ckpt, "hf_assets"))
    with pytest.raises(CheckpointError, match="hf_assets/config.json: not found.*--hf-config"):
        megatron_to_hf(ckpt, str(tmp_path / "out"), progress=False)


@pytest.mark.parametrize("damage", [lambda data: data[:len(data) // 2],
                                    lambda data: b"not a pickle"], ids=["truncated", "garbage"])
def test_damaged_torch_metadata_names_the_file(megatron_dir, tmp_path, damage):
    ckpt = str(tmp_path / "megatron")
    shutil.copytree(megatron_dir, ckpt)
    path = os.path.join(ckpt, ".metadata")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(damage(data))
    with pytest.raises(CheckpointError, match=r"megatron/\.metadata: unreadable.*save it again"):
        megatron_to_hf(ckpt, str(tmp_path / "out"), progress=False)


def test_an_interrupted_conversion_leaves_no_output_folder(megatron_dir, tmp_path,
                                                           monkeypatch):
    """The output folder appears only complete: config.json and the HF files came last, so a
    crash before them left shards that looked like a checkpoint."""
    import megatron_qarl.checkpoint.convert as convert

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    out, partial = tmp_path / "out", tmp_path / "out.partial"
    with monkeypatch.context() as patch:
        patch.setattr(convert, "copy_hf_assets", crash)
        with pytest.raises(KeyboardInterrupt):
            megatron_to_hf(megatron_dir, str(out), progress=False)
    assert not out.exists() and not partial.exists()
    partial.mkdir()  # as a killed run leaves it
    with pytest.raises(CheckpointError, match=r"out\.partial: left by an interrupted conversion"):
        megatron_to_hf(megatron_dir, str(out), progress=False)
    partial.rmdir()
    megatron_to_hf(megatron_dir, str(out), progress=False)
    assert (out / "config.json").is_file() and not partial.exists()
    given = tmp_path / "given"  # an empty folder given as the output is written in place
    given.mkdir()
    with monkeypatch.context() as patch:  # and emptied again on an error (not by .tmp shards)
        patch.setattr(convert, "copy_hf_assets", crash)
        with pytest.raises(KeyboardInterrupt):
            megatron_to_hf(megatron_dir, str(given), progress=False)
    assert given.is_dir() and not os.listdir(given)
    megatron_to_hf(megatron_dir, str(given), progress=False)
    assert (given / "config.json").is_file() and not (tmp_path / "given.partial").exists()


def test_not_a_megatron_checkpoint(hf_dir, tmp_path):
    with pytest.raises(CheckpointError, match=r"not a Megatron distributed checkpoint \(no "
                                              r"metadata.json\); it holds an HF checkpoint"):
        megatron_to_hf(hf_dir, str(tmp_path / "out"), hf_config_dir=hf_dir, progress=False)


@pytest.mark.parametrize("given", ["step", "save folder"])
def test_a_megatron_checkpoint_given_as_hf_names_itself_and_the_command(megatron_dir, tmp_path,
                                                                         given):
    """hf-to-megatron of a Megatron checkpoint (a step folder, or a --save folder of them):
    the error says what the folder is and which commands read it, not only "no config.json"."""
    folder = megatron_dir
    if given == "save folder":
        folder = str(tmp_path / "save")
        shutil.copytree(megatron_dir, os.path.join(folder, "iter_0000003"))
    with pytest.raises(CheckpointError, match=rf"{folder} is a Megatron checkpoint, not an HF "
                                              r"one: `tools/checkpoint.py megatron-to-hf`"):
        hf_to_megatron(folder, str(tmp_path / "out"), progress=False)
    assert not (tmp_path / "out").exists()


def test_quantized_checkpoint_without_its_quantization_config(megatron_dir, tmp_path, hf_dir):
    from megatron_qarl.checkpoint import export_quantized

    out = str(tmp_path / "w4a16")
    export_quantized(megatron_dir, out, "w4a16", progress=False)
    _edit_config(out, lambda c: c.pop("quantization_config"))
    with pytest.raises(CheckpointError, match="config.json: no quantization_config, but tensor "
                                              "'model.layers.0.mlp.experts.0.gate_proj'"):
        list(compare(hf_dir, out))


def test_a_quantized_hf_checkpoint_is_refused(broken):
    """Its codes were converted as weights and its scales dropped, without a word."""
    src, out = broken
    _edit_config(src, lambda c: c.update(quantization_config={"quant_method": "fp8"}))
    with pytest.raises(CheckpointError, match="a fp8 checkpoint .*convert the bf16 model"):
        hf_to_megatron(src, out, progress=False)
    assert not os.path.exists(out)


@pytest.mark.parametrize("edit, message", [
    (lambda w: w.update(symmetric=False), "symmetric=False"),
    (lambda w: w.update(actorder="group"), "actorder='group'"),
    (lambda w: w.update(num_bits=8), "num_bits=8"),
    (lambda w: w.update(group_size=96), "group_size 96"),
])
def test_a_w4a16_config_these_tools_did_not_write_is_refused(megatron_dir, tmp_path, hf_dir,
                                                              edit, message):
    """Only group_size was read: an asymmetric or act-ordered export (zero points, a
    permutation) was dequantized as ours without a word."""
    from megatron_qarl.checkpoint import export_quantized

    out = str(tmp_path / "w4a16")
    export_quantized(megatron_dir, out, "w4a16", progress=False)
    _edit_config(out, lambda c: edit(c["quantization_config"]["config_groups"]["group_0"]
                                     ["weights"]))
    with pytest.raises(CheckpointError, match=message):
        list(compare(hf_dir, out))


def test_fused_parts_of_mixed_dtypes_are_refused(broken):
    src, out = broken
    name = "model.layers.0.self_attn.k_proj.weight"
    _rewrite(_shard_of(src, name), lambda t: t.__setitem__(name, t[name].float()))
    with pytest.raises(CheckpointError, match="different dtypes"):
        hf_to_megatron(src, out, progress=False)
    assert not os.path.exists(out)


def test_compare_refuses_two_different_models(hf_dir, broken):
    other, _ = broken
    _edit_config(other, lambda c: c.update(num_hidden_layers=1))
    with pytest.raises(CheckpointError, match="different models"):
        list(compare(hf_dir, other))


def test_a_megatron_checkpoint_of_another_size_is_refused(megatron_dir, tmp_path):
    ckpt = str(tmp_path / "megatron")
    shutil.copytree(megatron_dir, ckpt)
    _edit_config(os.path.join(ckpt, "hf_assets"), lambda c: c.update(moe_intermediate_size=64))
    with pytest.raises(CheckpointError, match="has global shape .* expected"):
        megatron_to_hf(ckpt, str(tmp_path / "out"), progress=False)
    assert not os.path.exists(tmp_path / "out")
