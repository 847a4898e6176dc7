"""Per-rank Megatron shards of a tiny Qwen3-MoE, cut from full HF tensors following
Megatron's layouts (shared/reference/formats.md), independently of the code under test:
linear_qkv grouped per query group and split by groups, linear_proj / fc2 split along the
input dim, fc1 rank r = [gate_r; up_r], experts spread over EP ranks, vocab padded.
Experts are W4A16-quantized per shard, as the learner's cache holds them."""
from __future__ import annotations

from typing import Dict, List

import torch

from megatron_qarl.checkpoint.fused_tensors import merge_qkv
from megatron_qarl.checkpoint.hf_config import Qwen3MoeDims
from megatron_qarl.checkpoint.hf_names import hf_names
from megatron_qarl.quant import W4A16, to_serving
from megatron_qarl.rollout.publish import Partition, ShardedParam

DIMS = Qwen3MoeDims(num_layers=2, hidden=64, num_heads=4, num_kv_heads=2, head_dim=16,
                    ffn=64, num_experts=4, vocab=100, tied_embeddings=False)
PADDED_VOCAB = 104
SCHEME = W4A16(32)


def full_hf_weights(seed: int = 0) -> Dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {n: torch.randn(DIMS.hf_shape(n), generator=g).to(torch.bfloat16)
            for n in hf_names(DIMS.num_layers, DIMS.num_experts)}


def expected_serving(hf: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """What an engine must receive: experts quantized from the full weights, rest bf16."""
    out = {}
    for name, t in hf.items():
        if ".mlp.experts." in name:
            out.update(to_serving({name[:-len(".weight")]: SCHEME.quantize_weight(t.float())}))
        else:
            out[name] = t
    return out


def _split(t, parts, dim):
    return list(torch.chunk(t, parts, dim=dim))


def rank_shards(hf, tp: int, tp_rank: int, ep: int, ep_rank: int, etp: int,
                etp_rank: int) -> List[ShardedParam]:
    d = DIMS
    col, row, rep = Partition(0), Partition(1), Partition()
    out = []

    def padded(t):
        return torch.cat([t, torch.zeros(PADDED_VOCAB - d.vocab, t.shape[1], dtype=t.dtype)])

    out.append(ShardedParam("embedding.word_embeddings.weight",
                            _split(padded(hf["model.embed_tokens.weight"]), tp, 0)[tp_rank], col))
    for i in range(d.num_layers):
        p, m = f"model.layers.{i}.", f"decoder.layers.{i}."
        qkv = merge_qkv(hf[p + "self_attn.q_proj.weight"], hf[p + "self_attn.k_proj.weight"],
                        hf[p + "self_attn.v_proj.weight"], d.num_kv_heads, d.head_dim)
        out += [
            ShardedParam(m + "input_layernorm.weight", hf[p + "input_layernorm.weight"], rep),
            ShardedParam(m + "self_attention.linear_qkv.weight",
                         _split(qkv, tp, 0)[tp_rank], col),  # whole query groups per rank
            ShardedParam(m + "self_attention.linear_proj.weight",
                         _split(hf[p + "self_attn.o_proj.weight"], tp, 1)[tp_rank], row),
            ShardedParam(m + "self_attention.q_layernorm.weight", hf[p + "self_attn.q_norm.weight"], rep),
            ShardedParam(m + "self_attention.k_layernorm.weight", hf[p + "self_attn.k_norm.weight"], rep),
            ShardedParam(m + "pre_mlp_layernorm.weight", hf[p + "post_attention_layernorm.weight"], rep),
            ShardedParam(m + "mlp.router.weight", hf[p + "mlp.gate.weight"], rep),
        ]
        local = d.num_experts // ep
        for e in range(local):
            x = f"{p}mlp.experts.{ep_rank * local + e}."
            gate = _split(hf[x + "gate_proj.weight"], etp, 0)[etp_rank]
            up = _split(hf[x + "up_proj.weight"], etp, 0)[etp_rank]
            down = _split(hf[x + "down_proj.weight"], etp, 1)[etp_rank]
            name = f"{m}mlp.experts.local_experts.{e}."
            out += [
                ShardedParam(name + "linear_fc1.weight",
                             SCHEME.quantize_weight(torch.cat([gate, up]).float()),
                             Partition(0, 2, local)),
                ShardedParam(name + "linear_fc2.weight", SCHEME.quantize_weight(down.float()),
                             Partition(1, 1, local)),
            ]
    out.append(ShardedParam("decoder.final_layernorm.weight", hf["model.norm.weight"], rep))
    out.append(ShardedParam("output_layer.weight",
                            _split(padded(hf["lm_head.weight"]), tp, 0)[tp_rank], col))
    return out
