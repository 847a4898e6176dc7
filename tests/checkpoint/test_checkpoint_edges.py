"""Edges of the checkpoint package no other test reached (a mutation review, 2026-12-02): a
tied model's conversion, the reports' byte counts, the refusals of the fused-tensor helpers,
the safetensors reader and writer, the dense writer's own shape check, which files count as
HF assets, the schemes compare takes, and the --save folder's step lookup."""
import json
import os
import re
import shutil
import struct

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch.distributed.checkpoint.api import CheckpointException as DCPCheckpointException

from megatron_qarl.checkpoint import (CheckpointError, compare, export_quantized, hf_to_megatron,
                                      megatron_to_hf)
from megatron_qarl.checkpoint.errors import first_failure
from megatron_qarl.checkpoint.fused_tensors import merge_fc1, merge_qkv, split_fc1
from megatron_qarl.checkpoint.hf_names import hf_names
from megatron_qarl.checkpoint.paths import available_steps, latest_step
from megatron_qarl.checkpoint.safetensors_io import (INDEX_FILE, SafetensorsCheckpoint,
                                                     ShardedSafetensorsWriter, read_header)
from megatron_qarl.checkpoint.tensor_sources import scheme_of


def _hf_bytes(directory):
    return sum(t.numel() * t.element_size() for f in os.listdir(directory)
               if f.endswith(".safetensors")
               for t in load_file(os.path.join(directory, f)).values())


def test_a_tied_model_converts_with_its_lm_head_copy_and_back(tmp_path):
    """A tied checkpoint that keeps lm_head.weight (older exports did) converts: the copy is
    no weight of its own; and the way back writes no lm_head (transformers ties it)."""
    from transformers import Qwen3MoeForCausalLM
    from tiny_hf import tiny_hf_config

    hf = str(tmp_path / "hf")
    config = tiny_hf_config()
    config.tie_word_embeddings = True
    torch.manual_seed(0)
    Qwen3MoeForCausalLM(config).to(torch.bfloat16).save_pretrained(hf)
    shard = os.path.join(hf, "model.safetensors")
    tensors = load_file(shard)
    assert "lm_head.weight" not in tensors
    tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"].clone()
    save_file(tensors, shard, metadata={"format": "pt"})

    hf_to_megatron(hf, str(tmp_path / "mg"), progress=False)
    megatron_to_hf(str(tmp_path / "mg"), str(tmp_path / "back"), progress=False)
    back = load_file(os.path.join(tmp_path / "back", "model-00001-of-00001.safetensors"))
    assert set(back) == set(tensors) - {"lm_head.weight"}
    assert all(torch.equal(back[n], tensors[n]) for n in back)


def test_the_reports_count_the_models_bytes(hf_dir, tmp_path):
    """The CLI's GB and GB/s are the model's bf16 bytes both ways (not its element count)."""
    size = _hf_bytes(hf_dir)
    assert hf_to_megatron(hf_dir, str(tmp_path / "mg"), progress=False).bytes == size
    assert megatron_to_hf(str(tmp_path / "mg"), str(tmp_path / "hf"),
                          progress=False).bytes == size


def test_a_config_of_several_dtypes_keeps_its_dtype_label(tmp_path):
    from megatron_qarl.checkpoint.convert import _describe_dense_weights

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"torch_dtype": "bfloat16"}))
    _describe_dense_weights(str(path), {torch.float32, torch.float16})  # neither is the label
    assert json.loads(path.read_text()) == {"torch_dtype": "bfloat16"}


def test_fused_tensor_helpers_refuse_parts_that_do_not_fit():
    """Each refusal stands where torch would go on without a word (cat of unequal gate/up,
    chunk of an odd fc1) or fail with a message that names no config field."""
    q, k, v = torch.zeros(4 * 8, 16), torch.zeros(2 * 8, 16), torch.zeros(2 * 8, 16)
    assert merge_qkv(q, k, v, 2, 8).shape == (8 * 8, 16)
    for bad_k, bad_v in ((k, v[:8]), (k[:8], v[:8]), (k[:, :8], v[:, :8])):
        with pytest.raises(ValueError, match="do not form 2 query groups of head_dim 8"):
            merge_qkv(q, bad_k, bad_v, 2, 8)
    with pytest.raises(ValueError, match="gate .3, 4. and up .5, 4. differ in shape"):
        merge_fc1(torch.zeros(3, 4), torch.zeros(5, 4))
    with pytest.raises(ValueError, match="fc1: 7 rows cannot be .gate; up. halves"):
        split_fc1(torch.zeros(7, 4), "fc1")


def test_names_without_qk_norms():
    names = hf_names(1, 1, qk_layernorm=False)
    assert not [n for n in names if "q_norm" in n or "k_norm" in n]
    assert len(names) == len(hf_names(1, 1)) - 2


# ---------------------------------------------------------------- safetensors reader and writer
def test_a_file_cut_in_its_header_is_named(tmp_path):
    path = str(tmp_path / "model.safetensors")
    save_file({"a": torch.zeros(4)}, path)
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    for cut, message in ((4, "4 bytes, too short"), (8 + n // 2, f"header of {n} bytes")):
        with open(path, "wb") as f:
            f.write(data[:cut])
        with pytest.raises(CheckpointError, match=f"{message}.*truncated"):
            read_header(path)


def test_a_file_one_byte_short_is_named(tmp_path):
    path = str(tmp_path / "model.safetensors")
    save_file({"a": torch.zeros(4)}, path)
    read_header(path)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 1)
    with pytest.raises(CheckpointError, match="tensor 'a' ends at byte 16 of the data but the "
                                              "file has only 15"):
        read_header(path)


def test_a_torn_index_and_a_missing_shard_are_named(hf_dir, tmp_path):
    src = str(tmp_path / "hf")
    shutil.copytree(hf_dir, src)
    index = os.path.join(src, INDEX_FILE)
    with open(index) as f:
        weight_map = json.load(f)["weight_map"]
    shard = sorted(set(weight_map.values()))[-1]
    os.remove(os.path.join(src, shard))
    with pytest.raises(CheckpointError, match=rf"{shard}: missing; {INDEX_FILE} lists it"):
        SafetensorsCheckpoint(src)
    for text in ('{"weight_map": ', '{"metadata": {}}'):
        with open(index, "w") as f:
            f.write(text)
        with pytest.raises(CheckpointError, match=f"{INDEX_FILE}: not a safetensors index"):
            SafetensorsCheckpoint(src)


def test_a_dtype_these_tools_do_not_convert_is_named(tmp_path):
    save_file({"a": torch.zeros(2, dtype=torch.float64)}, str(tmp_path / "model.safetensors"))
    reader = SafetensorsCheckpoint(str(tmp_path))
    with pytest.raises(CheckpointError, match="tensor 'a' has dtype F64, which these tools do "
                                              "not convert"):
        reader.torch_dtype("a")
    with pytest.raises(CheckpointError, match="tensor 'b' not found"):
        reader.get("b")


def test_the_writer_names_shards_as_transformers_and_indexes_the_total(tmp_path):
    writer = ShardedSafetensorsWriter(str(tmp_path), max_shard_bytes=100)
    tensors = {f"t{i}": torch.full((10,), float(i)) for i in range(3)}  # 40 bytes each
    for name, tensor in tensors.items():
        writer.add(name, tensor)
    with pytest.raises(ValueError, match="tensor 't1' written twice"):
        writer.add("t1", tensors["t1"])
    with open(writer.close()) as f:
        index = json.load(f)
    assert index["metadata"]["total_size"] == 120
    assert index["weight_map"] == {"t0": "model-00001-of-00002.safetensors",
                                   "t1": "model-00001-of-00002.safetensors",
                                   "t2": "model-00002-of-00002.safetensors"}
    assert sorted(os.listdir(tmp_path)) == ["model-00001-of-00002.safetensors",
                                            "model-00002-of-00002.safetensors", INDEX_FILE]
    reader = SafetensorsCheckpoint(str(tmp_path))
    assert all(torch.equal(reader.get(n), t) for n, t in tensors.items())


# ---------------------------------------------------------------- dense writer, assets
@pytest.mark.parametrize("made, message", [
    (torch.zeros(3, 2), r"produced torch.float32 \[3, 2\], planned torch.float32 \[2, 3\]"),
    (torch.zeros(2, 3, dtype=torch.float64), r"produced torch.float64 \[2, 3\], planned "
                                             r"torch.float32"),
])
def test_the_writer_refuses_a_chunk_unlike_its_plan(tmp_path, made, message):
    """A chunk made in another shape or dtype than planned would be written as the plan's
    bytes (the metadata says [2, 3] float32)."""
    from megatron_qarl.checkpoint.dist_writer import save_lazily
    from megatron_qarl.checkpoint.megatron_layout import Chunk

    chunk = Chunk("x", (2, 3), (0, 0), (2, 3), ("a",), None)
    with pytest.raises(DCPCheckpointException) as e:
        save_lazily(str(tmp_path), [chunk], [torch.float32], [lambda: made], [])
    assert "CheckpointError: x at (0, 0): " in first_failure(e.value)
    assert re.search(message, first_failure(e.value))


def test_hf_assets_are_the_files_that_are_not_weights(tmp_path):
    from megatron_qarl.checkpoint.megatron_checkpoint import copy_hf_assets

    src = tmp_path / "src"
    src.mkdir()
    for name in ("config.json", "tokenizer.json", "generation_config.json", "model.safetensors",
                 INDEX_FILE, "pytorch_model.bin", "training_args.pt"):
        (src / name).write_text(name)
    (src / "original").mkdir()  # a subfolder (consolidated weights) is not an asset either
    copy_hf_assets(str(src), str(tmp_path / "dst"))
    assert sorted(os.listdir(tmp_path / "dst")) == ["config.json", "generation_config.json",
                                                    "tokenizer.json"]


# ---------------------------------------------------------------- export and compare
@pytest.mark.parametrize("scheme", ["none", "int8"])
def test_export_refuses_schemes_it_cannot_write(scheme, tmp_path):
    with pytest.raises(CheckpointError, match=f"--scheme {scheme}: export supports w4a16"):
        export_quantized(str(tmp_path / "missing"), str(tmp_path / "out"), scheme,
                         progress=False)


def test_an_export_the_groups_do_not_divide_is_refused_before_writing(tmp_path):
    """The export checks every weight against the scheme before writing (hidden size 192:
    groups of 128 do not divide it), with the export's flags, not the quantizer's."""
    from transformers import Qwen3MoeForCausalLM
    from tiny_hf import tiny_hf_config

    config = tiny_hf_config()
    config.hidden_size = 192
    hf, mg, out = (str(tmp_path / n) for n in ("hf", "mg", "out"))
    Qwen3MoeForCausalLM(config).to(torch.bfloat16).save_pretrained(hf)
    hf_to_megatron(hf, mg, progress=False)
    with pytest.raises(CheckpointError, match=r"--scheme w4a16-g128: .*192 input columns"):
        export_quantized(mg, out, "w4a16", progress=False)
    assert not os.path.exists(out) and not os.path.exists(out + ".partial")


@pytest.mark.parametrize("qc, message", [
    ({"quant_method": "compressed-tensors", "format": "float-quantized"}, "float-quantized"),
    ({"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"a": {"weights": {}}, "b": {"weights": {}}}}, "2 config groups"),
])
def test_compressed_tensors_layouts_these_tools_did_not_write_are_refused(qc, message):
    with pytest.raises(CheckpointError, match=message):
        scheme_of({"quantization_config": qc}, "config.json")


def test_compare_reports_the_largest_difference(hf_dir, tmp_path):
    """One changed weight: compare's number is its change, not a mean over the tensor."""
    copy = tmp_path / "copy"
    shutil.copytree(hf_dir, copy)
    name = "model.layers.1.mlp.experts.2.up_proj.weight"
    with open(copy / INDEX_FILE) as f:
        shard = str(copy / json.load(f)["weight_map"][name])
    tensors = load_file(shard)
    tensors[name][3, 5] += 1.0
    save_file(tensors, shard, metadata={"format": "pt"})
    diffs = {n: d for n, _, _, d in compare(hf_dir, str(copy))}
    original = load_file(_shard_of(hf_dir, name))[name][3, 5]
    assert diffs[name] == (original + 1.0).float().item() - original.float().item()
    assert sum(d > 0 for d in diffs.values()) == 1


def _shard_of(directory, name):
    with open(os.path.join(directory, INDEX_FILE)) as f:
        return os.path.join(directory, json.load(f)["weight_map"][name])


# ---------------------------------------------------------------- the --save folder
def test_the_latest_step_is_the_trackers_complete_one_else_the_newest(tmp_path):
    for step in (2, 10):
        (tmp_path / f"iter_{step:07d}").mkdir()
    (tmp_path / "iter_0000011").write_text("a file, not a checkpoint")
    (tmp_path / "iter_0000012.tmp").mkdir()
    assert available_steps(str(tmp_path)) == [2, 10]
    assert latest_step(str(tmp_path)) == 10
    tracker = tmp_path / "latest_checkpointed_iteration.txt"
    tracker.write_text("2\n")
    assert latest_step(str(tmp_path)) == 2
    tracker.write_text("7")  # a deleted checkpoint: the newest complete one
    assert latest_step(str(tmp_path)) == 10
