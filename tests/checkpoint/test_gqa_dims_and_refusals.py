"""Conversion with dimensions that tell query groups from heads per group (6 heads in 2 KV
groups) and hidden from ffn, which the tiny preset's (4 heads in 2 groups, hidden = head_dim =
ffn = 128) cannot; the config fields a conversion reads beyond the tiny preset's defaults; and
refusals no other test reached (a review's mutations passed every other test)."""
import dataclasses
import pytest
import torch

from megatron_qarl.checkpoint import CheckpointError, compare, export_quantized
from megatron_qarl.checkpoint.hf_config import (HF_DEFAULT_ROPE_THETA, Qwen3MoeDims,
                                                dims_from_config, rope_theta, validate_layout)
from megatron_qarl.checkpoint.hf_names import hf_to_megatron as name_to_megatron
from megatron_qarl.checkpoint.megatron_layout import chunk_from_hf, hf_from_chunk, layer_chunks
from megatron_qarl.checkpoint.model_preset import hf_config_from_preset, preset_from_hf_config
from megatron_qarl.checkpoint.quantized_export import split_quantized
from megatron_qarl.checkpoint.safetensors_io import SafetensorsCheckpoint
from megatron_qarl.checkpoint.tensor_sources import scheme_of
from megatron_qarl.models import QWEN3_MOE_TINY
from megatron_qarl.quant import get_scheme

# 3 heads per group in 2 KV groups; hidden 32, head_dim 8, ffn 16: no two dims alike
GQA = Qwen3MoeDims(num_layers=1, hidden=32, num_heads=6, num_kv_heads=2, head_dim=8, ffn=16,
                   num_experts=2, vocab=10, tied_embeddings=False)


def _tiny_config(**fields):
    return {**hf_config_from_preset(QWEN3_MOE_TINY), **fields}


def _qkv_chunk_and_hf():
    chunk = next(c for c in layer_chunks(GQA, 0) if c.fused == "qkv")
    g = torch.Generator().manual_seed(0)
    return chunk, {n: torch.randn(GQA.hf_shape(n), generator=g) for n in chunk.hf_names}



def test_fused_names_carry_their_part():
    p = "model.layers.0.mlp.experts.1."
    assert name_to_megatron(p + "gate_proj.weight").part == "gate"
    assert name_to_megatron(p + "up_proj.weight").part == "up"
    assert [name_to_megatron(f"model.layers.0.self_attn.{x}_proj.weight").part
            for x in "qkv"] == ["q", "k", "v"]


def test_heads_per_group_is_heads_over_kv_groups():
    assert GQA.heads_per_group == 3
    assert dataclasses.replace(GQA, num_heads=32, num_kv_heads=4).heads_per_group == 8


def test_qkv_fuses_per_query_group_and_splits_back():
    chunk, hf = _qkv_chunk_and_hf()
    data = chunk_from_hf(chunk, hf, GQA)
    # group 1 starts after group 0's 3 q heads, its k and v: with q head 3
    hd, hpg = GQA.head_dim, 3
    assert torch.equal(data[0, (hpg + 2) * hd:(hpg + 3) * hd],
                       hf[chunk.hf_names[0]][hpg * hd:(hpg + 1) * hd])
    back = hf_from_chunk(chunk, data, GQA)
    assert all(torch.equal(back[n], hf[n]) for n in chunk.hf_names)


def test_quantized_qkv_splits_into_each_projections_own_codes():
    chunk, hf = _qkv_chunk_and_hf()
    scheme = get_scheme("w4a16-g32")
    fused = chunk_from_hf(chunk, hf, GQA).reshape(chunk.tensor_shape)
    parts = split_quantized(chunk, scheme.quantize_weight(fused), GQA)
    for name in chunk.hf_names:
        alone = scheme.quantize_weight(hf[name])
        got = parts[name[:-len(".weight")]]
        assert got.shape == alone.shape, name
        assert torch.equal(got.data, alone.data) and torch.equal(got.scale, alone.scale), name


def test_hf_shapes_are_transformers():
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
    cfg = Qwen3MoeConfig(hidden_size=32, num_attention_heads=6, num_key_value_heads=2, head_dim=8,
                         moe_intermediate_size=16, num_experts=2, num_experts_per_tok=1,
                         num_hidden_layers=1, vocab_size=10, intermediate_size=64,
                         tie_word_embeddings=False)
    model = Qwen3MoeForCausalLM(cfg)
    shapes = GQA.hf_shapes()
    # the experts' shapes as config.json's names save them (transformers 5 fuses them in memory)
    assert shapes["model.layers.0.mlp.experts.1.down_proj.weight"] == (32, 16)
    assert shapes["model.layers.0.mlp.experts.1.gate_proj.weight"] == (16, 32)
    assert shapes["model.layers.0.self_attn.o_proj.weight"] == tuple(
        model.model.layers[0].self_attn.o_proj.weight.shape)


def test_embeddings_are_untied_unless_the_config_ties_them():
    config = _tiny_config()
    del config["tie_word_embeddings"]
    assert dims_from_config(config).tied_embeddings is False


@pytest.mark.parametrize("edit, message", [
    (dict(shared_expert_intermediate_size=128), "shared experts"),
    (dict(num_attention_heads=3), "not a multiple of num_key_value_heads"),
    (dict(decoder_sparse_step=2), "dense"),
])
def test_configs_of_other_layouts_are_refused(edit, message):
    with pytest.raises(CheckpointError, match=message):
        dims_from_config(_tiny_config(**edit))


def test_kv_heads_must_split_by_tp():
    with pytest.raises(CheckpointError, match="num_key_value_heads 2 .by TP 4"):
        validate_layout(dims_from_config(_tiny_config()), tp=4)


def test_rope_base_from_either_transformers_layout_or_hfs_default():
    """A config naming no base is built by transformers with 10000, not Qwen3-30B-A3B's 1e6."""
    from transformers import Qwen3MoeConfig

    assert rope_theta({"rope_parameters": {"rope_theta": 1e4, "rope_type": "default"}}) == 1e4
    assert rope_theta({"rope_theta": 5e5}) == 5e5
    built = Qwen3MoeConfig().to_dict()
    assert rope_theta({}) == HF_DEFAULT_ROPE_THETA == rope_theta(built)


def test_a_preset_round_trips_through_its_config():
    odd = dataclasses.replace(QWEN3_MOE_TINY, rope_theta=5e5, rms_norm_eps=2e-6)
    assert preset_from_hf_config(hf_config_from_preset(odd), name=odd.name) == odd
    t5 = {k: v for k, v in hf_config_from_preset(odd).items() if k != "rope_theta"}
    t5["rope_parameters"] = {"rope_theta": 5e5, "rope_type": "default"}
    assert preset_from_hf_config(t5, name=odd.name) == odd


def test_fp8_export_quantizes_attention_by_default(megatron_dir, tmp_path):
    out = str(tmp_path / "fp8")
    export_quantized(megatron_dir, out, "fp8-block", progress=False)
    names = SafetensorsCheckpoint(out).names()
    assert "model.layers.0.self_attn.q_proj.weight_scale_inv" in names
    assert "model.layers.0.self_attn.o_proj.weight_scale_inv" in names


def test_an_fp8_block_size_these_tools_did_not_write_is_refused():
    with pytest.raises(CheckpointError, match="is not one these tools wrote"):
        scheme_of({"quantization_config": {"quant_method": "fp8", "weight_block_size": [64, 64]}},
                  "config.json")


def test_compare_reads_fp8_exports_dequantized(hf_dir, megatron_dir, tmp_path):
    out = str(tmp_path / "fp8")
    export_quantized(megatron_dir, out, "fp8-block", progress=False)
    rows = {n: d for n, _, _, d in compare(hf_dir, out)}
    q = "model.layers.0.self_attn.q_proj.weight"
    # dequantized FP8 is within a few % of the bf16 source, raw e4m3 codes are not
    src = SafetensorsCheckpoint(hf_dir).get(q).float()
    assert rows[q] < 0.1 * src.abs().max().item()
