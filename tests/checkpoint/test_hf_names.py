"""The Megatron <-> HF name mapping and the fused-tensor splits, on Qwen3-30B-A3B's shapes."""
import pytest
import torch

from megatron_qarl.checkpoint.fused_tensors import merge_fc1, merge_qkv, split_fc1, split_qkv
from megatron_qarl.checkpoint.hf_config import Qwen3MoeDims
from megatron_qarl.checkpoint.hf_names import (
    UnknownTensorName, hf_names, hf_to_megatron, megatron_expert_name, megatron_to_hf,
)
from megatron_qarl.checkpoint.megatron_layout import all_chunks

QWEN3_30B = Qwen3MoeDims(num_layers=48, hidden=2048, num_heads=32, num_kv_heads=4, head_dim=128,
                         ffn=768, num_experts=128, vocab=151936, tied_embeddings=False)


def test_every_hf_name_maps_to_megatron_and_back():
    names = hf_names(48, 128)
    assert len(names) == 3 + 48 * (9 + 128 * 3)  # Qwen3-30B-A3B has 18867 tensors
    for name in names:
        target = hf_to_megatron(name)
        assert name in megatron_to_hf(target.name)


def test_checkpoint_order_is_embedding_layers_then_norm_and_head():
    """The order every converter writes and reads in, one decoder layer at a time."""
    names = hf_names(2, 1)
    assert names[0] == "model.embed_tokens.weight"
    assert names[-2:] == ("model.norm.weight", "lm_head.weight")
    assert [n.split(".")[2] for n in names[1:-2]] == ["0"] * 12 + ["1"] * 12
    assert hf_names(2, 1, tied_embeddings=True) == names[:-1]


def test_expert_offset_makes_local_experts_global():
    name = "module.decoder.layers.5.mlp.experts.local_experts.3.linear_fc1.weight"
    assert megatron_to_hf(name, expert_offset=64) == (
        "model.layers.5.mlp.experts.67.gate_proj.weight",
        "model.layers.5.mlp.experts.67.up_proj.weight")
    assert megatron_to_hf("decoder.layers.5.mlp.experts.linear_fc2.weight3", 64) == (
        "model.layers.5.mlp.experts.67.down_proj.weight",)
    assert hf_to_megatron("model.layers.5.mlp.experts.67.up_proj.weight").name == \
        megatron_expert_name(5, 67, "linear_fc1.weight")


def test_unknown_names_are_refused_with_the_name():
    with pytest.raises(UnknownTensorName, match="decoder.layers.0.mlp.shared_experts"):
        megatron_to_hf("decoder.layers.0.mlp.shared_experts.linear_fc1.weight")
    with pytest.raises(UnknownTensorName, match="model.layers.0.mlp.shared_expert"):
        hf_to_megatron("model.layers.0.mlp.shared_expert.gate_proj.weight")


def test_qkv_split_is_per_query_group_and_inverts_merge():
    ng, hpg, hd, h = 4, 8, 128, 64
    q, k, v = (torch.randn(n * hd, h) for n in (ng * hpg, ng, ng))
    qkv = merge_qkv(q, k, v, ng, hd)
    # query group 1 starts after group 0's 8 q heads, its k and its v head
    assert torch.equal(qkv[(hpg + 2) * hd:(hpg + 2) * hd + hd], q[hpg * hd:(hpg + 1) * hd])
    assert torch.equal(qkv[hpg * hd:(hpg + 1) * hd], k[:hd])
    assert all(torch.equal(a, b) for a, b in zip(split_qkv(qkv, ng, hpg, hd), (q, k, v)))
    # a TP rank's shard holds whole groups: the same split works on it
    shard = qkv[: 2 * (hpg + 2) * hd]
    sq, sk, sv = split_qkv(shard, 2, hpg, hd)
    assert torch.equal(sq, q[: 2 * hpg * hd]) and torch.equal(sv, v[: 2 * hd])
    with pytest.raises(ValueError, match="linear_qkv.weight: shape"):
        split_qkv(qkv[:-1], ng, hpg, hd)


def test_fc1_is_gate_then_up():
    gate, up = torch.randn(768, 32), torch.randn(768, 32)
    fc1 = merge_fc1(gate, up)
    assert torch.equal(fc1[:768], gate)
    assert all(torch.equal(a, b) for a, b in zip(split_fc1(fc1), (gate, up)))


def test_megatron_layout_covers_every_hf_tensor_once_and_the_full_size():
    chunks = all_chunks(QWEN3_30B)
    covered = [n for c in chunks for n in c.hf_names]
    assert sorted(covered) == sorted(hf_names(48, 128))
    assert sum(c.numel for c in chunks) == 30_532_122_624  # Qwen3-30B-A3B's parameter count
