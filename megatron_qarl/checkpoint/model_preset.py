"""HF Qwen3-MoE config.json <-> the Megatron model preset, so a converted checkpoint loads into
`megatron_qarl.models.build_model` with the right shapes, and a preset (e.g. Qwen3-30B-A3B
for the benchmark, the tiny one for tests) can be written as an HF model."""
from __future__ import annotations

from ..models import Qwen3MoEPreset
from .errors import CheckpointError
from .hf_config import CONFIG_FILE, NORM_TOPK_PROB, dims_from_config, rope_theta

#: config.json keys a preset needs beyond the conversion's
PRESET_KEYS = ("num_experts_per_tok", "max_position_embeddings")


def preset_from_hf_config(config: dict, name: str = "hf", path: str = CONFIG_FILE
                          ) -> Qwen3MoEPreset:
    dims = dims_from_config(config, path)
    if dims.tied_embeddings:
        raise ValueError(f"{path}: tie_word_embeddings is true; the QaRL models keep "
                         f"lm_head separate (Qwen3-30B-A3B does)")
    missing = [key for key in PRESET_KEYS if key not in config]
    if missing:
        raise CheckpointError(f"{path}: missing {', '.join(missing)}; copy config.json from "
                              f"the original HF model directory")
    return Qwen3MoEPreset(
        name=name, num_layers=dims.num_layers, hidden_size=dims.hidden,
        num_attention_heads=dims.num_heads, num_key_value_heads=dims.num_kv_heads,
        head_dim=dims.head_dim, moe_intermediate_size=dims.ffn,
        num_experts=dims.num_experts, num_experts_per_tok=config["num_experts_per_tok"],
        vocab_size=dims.vocab, max_position_embeddings=config["max_position_embeddings"],
        intermediate_size=config.get("intermediate_size", dims.ffn),
        rope_theta=rope_theta(config),
        rms_norm_eps=config.get("rms_norm_eps", 1e-6),
    )


def hf_config_from_preset(preset: Qwen3MoEPreset) -> dict:
    """The config.json fields of a preset (Qwen3MoeConfig keyword arguments)."""
    return dict(
        model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"],
        num_hidden_layers=preset.num_layers, hidden_size=preset.hidden_size,
        num_attention_heads=preset.num_attention_heads,
        num_key_value_heads=preset.num_key_value_heads, head_dim=preset.head_dim,
        moe_intermediate_size=preset.moe_intermediate_size, num_experts=preset.num_experts,
        num_experts_per_tok=preset.num_experts_per_tok, vocab_size=preset.vocab_size,
        max_position_embeddings=preset.max_position_embeddings,
        intermediate_size=preset.intermediate_size, rope_theta=preset.rope_theta,
        rms_norm_eps=preset.rms_norm_eps, norm_topk_prob=NORM_TOPK_PROB,
        tie_word_embeddings=False,
        decoder_sparse_step=1, mlp_only_layers=[], torch_dtype="bfloat16",
    )
