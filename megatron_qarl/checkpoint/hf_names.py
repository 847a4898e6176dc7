"""Megatron-Core <-> Hugging Face tensor names for Qwen3-MoE (shared/reference/formats.md).

Names only: how the fused Megatron tensors (linear_qkv, expert linear_fc1) are cut into
their HF parts lives in `fused_tensors.py`. This module is the one place that knows the
mapping; the checkpoint tools and the SGLang bridge both import it.

Megatron names are the per-rank module names of a local-spec GPTModel
(`model.named_parameters()`), with the expert index GLOBAL: a rank of expert-parallel rank
r holding n local experts passes `expert_offset=r * n`
(`mlp.experts.local_experts.{e}.` is SequentialMLP's spelling, `linear_fc1.weight{e}` the
grouped one; both are accepted).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Sequence, Tuple, TypeVar

T = TypeVar("T")

#: parts of a fused Megatron tensor, in the order they are stacked along dim 0
QKV_PARTS = ("q", "k", "v")
FC1_PARTS = ("gate", "up")

TOP_LEVEL = {
    "embedding.word_embeddings.weight": "model.embed_tokens.weight",
    "decoder.final_layernorm.weight": "model.norm.weight",
    "output_layer.weight": "lm_head.weight",
}

#: per-layer Megatron suffix -> HF suffixes (one per part, in stacking order)
LAYER = {
    "input_layernorm.weight": ("input_layernorm.weight",),
    "self_attention.linear_qkv.weight": (
        "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight"),
    "self_attention.linear_proj.weight": ("self_attn.o_proj.weight",),
    "self_attention.q_layernorm.weight": ("self_attn.q_norm.weight",),
    "self_attention.k_layernorm.weight": ("self_attn.k_norm.weight",),
    "pre_mlp_layernorm.weight": ("post_attention_layernorm.weight",),
    "mlp.router.weight": ("mlp.gate.weight",),
}

#: per-expert Megatron linear -> HF suffixes under `mlp.experts.{e}.`
EXPERT = {
    "linear_fc1.weight": ("gate_proj.weight", "up_proj.weight"),
    "linear_fc2.weight": ("down_proj.weight",),
}

_LAYER_RE = re.compile(r"^(?:module\.)*decoder\.layers\.(\d+)\.(.+)$")
_SEQ_EXPERT_RE = re.compile(r"^mlp\.experts\.local_experts\.(\d+)\.(linear_fc[12]\.weight)$")
_GROUPED_EXPERT_RE = re.compile(r"^mlp\.experts\.(linear_fc[12]\.weight)(\d+)$")
_HF_LAYER_RE = re.compile(r"^model\.layers\.(\d+)\.(.+)$")
_HF_EXPERT_RE = re.compile(r"^mlp\.experts\.(\d+)\.(.+)$")


class UnknownTensorName(KeyError):
    """A name outside the Qwen3-MoE mapping (another architecture, or a typo)."""

    def __str__(self) -> str:  # KeyError would print the repr of the message
        return str(self.args[0])


@dataclass(frozen=True)
class MegatronTensor:
    """Where an HF tensor lives in Megatron: the tensor, and which slice of a fused one."""

    name: str  # Megatron module name, global expert index in SequentialMLP spelling
    part: Optional[str]  # "q"/"k"/"v" of linear_qkv, "gate"/"up" of fc1, None if unfused
    layer: Optional[int]
    expert: Optional[int]


def hf_layer_prefix(layer: int) -> str:
    return f"model.layers.{layer}."


def hf_expert_prefix(layer: int, expert: int) -> str:
    return f"model.layers.{layer}.mlp.experts.{expert}."


def megatron_expert_name(layer: int, expert: int, linear: str) -> str:
    """SequentialMLP spelling with a global expert index, e.g. linear='linear_fc1.weight'."""
    return f"decoder.layers.{layer}.mlp.experts.local_experts.{expert}.{linear}"


def megatron_to_hf(name: str, expert_offset: int = 0) -> Tuple[str, ...]:
    """HF names of one Megatron tensor, in the order its parts are stacked (q,k,v / gate,up)."""
    name = re.sub(r"^(?:module\.)+", "", name)
    if name in TOP_LEVEL:
        return (TOP_LEVEL[name],)
    m = _LAYER_RE.match(name)
    if m:
        layer, rest = int(m.group(1)), m.group(2)
        if rest in LAYER:
            return tuple(hf_layer_prefix(layer) + s for s in LAYER[rest])
        e = _SEQ_EXPERT_RE.match(rest)
        if e:
            expert, linear = int(e.group(1)), e.group(2)
        else:
            e = _GROUPED_EXPERT_RE.match(rest)
            expert, linear = (int(e.group(2)), e.group(1)) if e else (None, None)
        if linear is not None:
            prefix = hf_expert_prefix(layer, expert + expert_offset)
            return tuple(prefix + s for s in EXPERT[linear])
    raise UnknownTensorName(
        f"Megatron tensor {name!r} has no Qwen3-MoE HF name; the model is not a local-spec "
        f"Qwen3-MoE GPTModel (see megatron_qarl/checkpoint/hf_names.py for the mapping)"
    )


def hf_to_megatron(name: str) -> MegatronTensor:
    """The Megatron tensor (and part of it) an HF checkpoint tensor belongs to."""
    for mname, hname in TOP_LEVEL.items():
        if name == hname:
            return MegatronTensor(mname, None, None, None)
    m = _HF_LAYER_RE.match(name)
    if m:
        layer, rest = int(m.group(1)), m.group(2)
        for msuffix, hsuffixes in LAYER.items():
            if rest in hsuffixes:
                part = QKV_PARTS[hsuffixes.index(rest)] if len(hsuffixes) == 3 else None
                return MegatronTensor(f"decoder.layers.{layer}.{msuffix}", part, layer, None)
        e = _HF_EXPERT_RE.match(rest)
        if e:
            expert, suffix = int(e.group(1)), e.group(2)
            for linear, hsuffixes in EXPERT.items():
                if suffix in hsuffixes:
                    part = FC1_PARTS[hsuffixes.index(suffix)] if len(hsuffixes) == 2 else None
                    return MegatronTensor(megatron_expert_name(layer, expert, linear), part,
                                          layer, expert)
    raise UnknownTensorName(
        f"HF tensor {name!r} is not part of a Qwen3-MoE checkpoint (expected names like "
        f"model.layers.0.mlp.experts.0.gate_proj.weight; see "
        f"megatron_qarl/checkpoint/hf_names.py)"
    )


def hf_layer_names(layer: int, num_experts: int, qk_layernorm: bool = True) -> Tuple[str, ...]:
    """Every HF tensor name of decoder layer `layer`, in a fixed order."""
    names = [hf_layer_prefix(layer) + s for m, hs in LAYER.items() for s in hs
             if qk_layernorm or "_layernorm" not in m or "self_attention" not in m]
    names += [hf_expert_prefix(layer, e) + s for e in range(num_experts)
              for hs in EXPERT.values() for s in hs]
    return tuple(names)


def hf_top_names(tied_embeddings: bool = False) -> Tuple[str, ...]:
    """The HF names outside the decoder layers: embedding, final norm, lm_head (none when the
    embedding is tied)."""
    return tuple(h for m, h in TOP_LEVEL.items()
                 if not (tied_embeddings and m == "output_layer.weight"))


def checkpoint_order(top: Sequence[T], layer: Callable[[int], Sequence[T]],
                     num_layers: int) -> Iterator[Tuple[str, Sequence[T]]]:
    """(label, items) in HF checkpoint order, a decoder layer at a time: the embedding
    (top[0]), layer(0) .. layer(num_layers - 1), then the final norm and lm_head (top[1:]).
    Items are names or Megatron chunks; layer is called as each group is reached."""
    yield "embedding", top[:1]
    for i in range(num_layers):
        yield f"layer {i}", layer(i)
    yield "final norm, lm_head", top[1:]


def hf_names(num_layers: int, num_experts: int, qk_layernorm: bool = True,
             tied_embeddings: bool = False) -> Tuple[str, ...]:
    """Every HF tensor name of a Qwen3-MoE checkpoint, in checkpoint order."""
    groups = checkpoint_order(hf_top_names(tied_embeddings),
                              lambda i: hf_layer_names(i, num_experts, qk_layernorm), num_layers)
    return tuple(name for _, names in groups for name in names)
