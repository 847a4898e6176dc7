"""The dimensions of a Qwen3-MoE model, read and checked from an HF config.json, and the
shape every HF tensor must have. Conversions check shapes against these before writing."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Dict, Tuple

from .errors import CheckpointError
from .hf_names import hf_names, hf_to_megatron
from .paths import is_megatron, require_folder, resolve

CONFIG_FILE = "config.json"
MODEL_TYPE = "qwen3_moe"
#: config.json keys the conversion needs (HF Qwen3MoeConfig attribute names)
REQUIRED_KEYS = ("num_hidden_layers", "hidden_size", "num_attention_heads",
                 "num_key_value_heads", "head_dim", "moe_intermediate_size", "num_experts",
                 "vocab_size")
#: transformers 5 writes num_experts under the name it maps it to
ALIASES = {"num_experts": "num_local_experts"}
#: what the presets build, where HF's own default differs (Qwen3MoeConfig's is false)
NORM_TOPK_PROB = True


@dataclass(frozen=True)
class Qwen3MoeDims:
    num_layers: int
    hidden: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    ffn: int  # moe_intermediate_size, per expert
    num_experts: int
    vocab: int
    tied_embeddings: bool

    @property
    def heads_per_group(self) -> int:
        return self.num_heads // self.num_kv_heads

    def hf_shapes(self) -> Dict[str, Tuple[int, ...]]:
        """Every HF tensor of the checkpoint -> its shape."""
        return {name: self.hf_shape(name)
                for name in hf_names(self.num_layers, self.num_experts,
                                     tied_embeddings=self.tied_embeddings)}

    def hf_shape(self, name: str) -> Tuple[int, ...]:
        h, hd = self.hidden, self.head_dim
        by_suffix = {
            "model.embed_tokens.weight": (self.vocab, h), "lm_head.weight": (self.vocab, h),
            "model.norm.weight": (h,), "input_layernorm.weight": (h,),
            "post_attention_layernorm.weight": (h,), "self_attn.q_norm.weight": (hd,),
            "self_attn.k_norm.weight": (hd,), "self_attn.q_proj.weight": (self.num_heads * hd, h),
            "self_attn.k_proj.weight": (self.num_kv_heads * hd, h),
            "self_attn.v_proj.weight": (self.num_kv_heads * hd, h),
            "self_attn.o_proj.weight": (h, self.num_heads * hd),
            "mlp.gate.weight": (self.num_experts, h),
            "gate_proj.weight": (self.ffn, h), "up_proj.weight": (self.ffn, h),
            "down_proj.weight": (h, self.ffn),
        }
        for suffix, shape in by_suffix.items():
            if name == suffix or name.endswith("." + suffix):
                return shape
        hf_to_megatron(name)  # raises UnknownTensorName for names outside the mapping
        raise AssertionError(f"hf_config.py lacks the shape of {name}")  # mapping drift


def dims_from_config(config: dict, path: str = CONFIG_FILE) -> Qwen3MoeDims:
    """Check a config.json dict and read the dimensions; `path` is named in errors."""
    if config.get("model_type") != MODEL_TYPE:
        raise CheckpointError(
            f"{path}: model_type is {config.get('model_type')!r}, expected {MODEL_TYPE!r}; "
            f"these tools convert Qwen3-MoE checkpoints (e.g. Qwen/Qwen3-30B-A3B)"
        )
    config = {**{k: config[a] for k, a in ALIASES.items() if a in config}, **config}
    missing = [k for k in REQUIRED_KEYS if k not in config]
    if missing:
        raise CheckpointError(
            f"{path}: missing {', '.join(missing)}; copy config.json from the original HF "
            f"model directory"
        )
    if config.get("shared_expert_intermediate_size"):
        raise CheckpointError(f"{path}: shared experts are not part of Qwen3-MoE")
    if config.get("attention_bias"):
        raise CheckpointError(f"{path}: attention_bias is true; Qwen3-MoE's attention has no "
                              f"biases and the Megatron model is built without them (they "
                              f"would be dropped)")
    dims = Qwen3MoeDims(
        num_layers=config["num_hidden_layers"], hidden=config["hidden_size"],
        num_heads=config["num_attention_heads"], num_kv_heads=config["num_key_value_heads"],
        head_dim=config["head_dim"], ffn=config["moe_intermediate_size"],
        num_experts=config["num_experts"], vocab=config["vocab_size"],
        tied_embeddings=bool(config.get("tie_word_embeddings", False)),
    )
    if dims.num_heads % dims.num_kv_heads:
        raise CheckpointError(
            f"{path}: num_attention_heads {dims.num_heads} is not a multiple of "
            f"num_key_value_heads {dims.num_kv_heads}"
        )
    if config.get("mlp_only_layers") or config.get("decoder_sparse_step", 1) != 1:
        raise CheckpointError(
            f"{path}: dense (mlp_only_layers / decoder_sparse_step) layers are not supported; "
            f"every layer must be an MoE layer as in Qwen3-30B-A3B"
        )
    _refuse_other_computations(config, path)
    return dims


#: Qwen3MoeConfig's RoPE base when config.json names none (transformers 4 and 5 alike);
#: Qwen3-30B-A3B's config sets 1e6
HF_DEFAULT_ROPE_THETA = 10000.0


def rope_theta(config: dict) -> float:
    """RoPE's base, where transformers 5 (rope_parameters) or 4 (rope_theta) writes it, or
    the base transformers builds the model with when it names none."""
    return (config.get("rope_parameters") or {}).get(
        "rope_theta", config.get("rope_theta", HF_DEFAULT_ROPE_THETA))


def _refuse_other_computations(config: dict, path: str) -> None:
    """Fields that change what the model computes but no tensor's shape: the Megatron model
    is Qwen3-30B-A3B's computation, so a config asking for another is refused by name (its
    weights would convert and load, and train as another model)."""
    rope = config.get("rope_parameters") or {}
    problems = []
    if config.get("norm_topk_prob") is not NORM_TOPK_PROB:
        problems.append(f"norm_topk_prob is {config.get('norm_topk_prob', 'absent')} (HF's "
                        f"default is false): the router renormalises its top-k probabilities, "
                        f"as Qwen3-30B-A3B's config.json sets it")
    if config.get("rope_scaling") or rope.get("rope_type", "default") != "default":
        problems.append(f"RoPE scaling ({config.get('rope_scaling') or rope}): plain RoPE is "
                        f"built; drop rope_scaling (the YaRN entry Qwen3's model card adds for "
                        f"long contexts)")
    if config.get("use_sliding_window"):
        problems.append("use_sliding_window is true: attention is built over the whole "
                        "sequence")
    if config.get("hidden_act", "silu") != "silu":
        problems.append(f"hidden_act is {config['hidden_act']!r}: the experts are SwiGLU (silu)")
    if problems:
        raise CheckpointError(f"{path}: " + "; ".join(problems))


def read_config(directory: str, filename: str = CONFIG_FILE) -> dict:
    require_folder(directory)
    path = os.path.join(directory, filename)
    if not os.path.isfile(path):
        raise CheckpointError(
            f"{path}: not found; " + (
                f"{directory} is a Megatron checkpoint, not an HF one: `tools/checkpoint.py "
                f"megatron-to-hf` converts it to HF, `export` to a quantized HF checkpoint"
                if is_megatron(resolve(directory)) else "an HF checkpoint directory needs its config.json (copy it "
                                 "from the original model)"))
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise CheckpointError(f"{path}: not valid JSON ({e}); the file is truncated or "
                              f"corrupt: copy it again") from e


def validate_layout(dims: Qwen3MoeDims, tp: int = 1, ep: int = 1) -> None:
    """Check that a Megatron model with this TP/EP can load the checkpoint."""
    checks = [
        (dims.num_heads % tp == 0, f"num_attention_heads {dims.num_heads} (by TP {tp})"),
        (dims.num_kv_heads % tp == 0, f"num_key_value_heads {dims.num_kv_heads} (by TP {tp})"),
        (dims.num_experts % ep == 0, f"num_experts {dims.num_experts} (by EP {ep})"),
    ]
    for ok, what in checks:
        if not ok:
            raise CheckpointError(
                f"--tensor-model-parallel-size {tp} / --expert-model-parallel-size {ep}: "
                f"{what} is not divisible; choose sizes that divide it"
            )

