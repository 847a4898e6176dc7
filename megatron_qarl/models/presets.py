"""Qwen3-MoE model presets: Qwen3-30B-A3B exactly, and smaller models of the same structure
(q/k RMSNorm, GQA, softmax top-k router with renormalisation, SwiGLU experts, no shared
expert, no biases, untied embeddings, RoPE) for tests, examples and benchmarks.

The router matches HF `norm_topk_prob=True`: Megatron's top-k on logits followed by a softmax
over the k chosen (`moe_router_pre_softmax=False`) equals softmax -> top-k -> renormalise.
"""
from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from megatron.core import parallel_state
from megatron.core.transformer import TransformerConfig


@dataclass(frozen=True)
class Qwen3MoEPreset:
    """The HF config.json fields of a Qwen3-MoE model that shape the Megatron model."""

    name: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    moe_intermediate_size: int
    num_experts: int
    num_experts_per_tok: int
    vocab_size: int
    max_position_embeddings: int
    intermediate_size: int  # dense FFN width (unused while every layer is MoE)
    rope_theta: float = 1e6
    rms_norm_eps: float = 1e-6
    router_aux_loss_coef: float = 0.001

    def transformer_config(self, *, tp: Optional[int] = None, ep: Optional[int] = None,
                           etp: Optional[int] = None, params_dtype: torch.dtype = torch.bfloat16,
                           use_cpu_initialization: bool = False,
                           **overrides) -> TransformerConfig:
        """The Megatron config; parallel sizes default to Megatron's initialised state."""
        tp = tp or parallel_state.get_tensor_model_parallel_world_size()
        ep = ep or parallel_state.get_expert_model_parallel_world_size()
        etp = etp or parallel_state.get_expert_tensor_parallel_world_size()
        kwargs = dict(
            num_layers=self.num_layers,
            hidden_size=self.hidden_size,
            num_attention_heads=self.num_attention_heads,
            num_query_groups=self.num_key_value_heads,
            kv_channels=self.head_dim,
            ffn_hidden_size=self.intermediate_size,
            moe_ffn_hidden_size=self.moe_intermediate_size,
            num_moe_experts=self.num_experts,
            moe_router_topk=self.num_experts_per_tok,
            moe_router_score_function="softmax",
            moe_router_pre_softmax=False,
            moe_router_load_balancing_type="aux_loss",
            moe_aux_loss_coeff=self.router_aux_loss_coef,
            moe_token_dispatcher_type="alltoall",
            moe_grouped_gemm=False,
            normalization="RMSNorm",
            layernorm_epsilon=self.rms_norm_eps,
            qk_layernorm=True,
            gated_linear_unit=True,
            activation_func=F.silu,
            add_bias_linear=False,
            add_qkv_bias=False,
            hidden_dropout=0.0,
            attention_dropout=0.0,
            bias_dropout_fusion=False,
            persist_layer_norm=False,
            tensor_model_parallel_size=tp,
            expert_model_parallel_size=ep,
            expert_tensor_parallel_size=etp,
            # Megatron requires sequence parallelism for MoE with TP > 1.
            sequence_parallel=tp > 1,
            params_dtype=params_dtype,
            bf16=params_dtype == torch.bfloat16,
            use_cpu_initialization=use_cpu_initialization,
            # the whole layer, what 0.16.1 turns its own default ("full") into after warning at
            # every build that "full" is deprecated
            cuda_graph_scope=[],
        )
        kwargs.update(overrides)
        with warnings.catch_warnings():
            # moe_router_dtype stays unset: the gate GEMM runs in the params dtype, as in
            # SGLang's and HF's Qwen3-MoE, so the learner routes from the logits the rollout
            # routes from. Megatron warns at every build of >= 32 experts that it is unset.
            warnings.filterwarnings("ignore", "Using a large number of experts",
                                    UserWarning)
            return TransformerConfig(**kwargs)

    def model_kwargs(self) -> dict:
        """The GPTModel arguments outside TransformerConfig (for `build_model`)."""
        return dict(vocab_size=self.vocab_size,
                    max_sequence_length=self.max_position_embeddings,
                    rotary_base=self.rope_theta)

    def replace(self, **changes) -> "Qwen3MoEPreset":
        return dataclasses.replace(self, **changes)


QWEN3_30B_A3B = Qwen3MoEPreset(
    name="qwen3-30b-a3b", num_layers=48, hidden_size=2048, num_attention_heads=32,
    num_key_value_heads=4, head_dim=128, moe_intermediate_size=768, num_experts=128,
    num_experts_per_tok=8, vocab_size=151936, max_position_embeddings=40960,
    intermediate_size=6144,
)

#: ~217M parameters: the GPU benchmark model (all dims multiples of 128, so every scheme fits).
QWEN3_MOE_200M = Qwen3MoEPreset(
    name="qwen3-moe-200m", num_layers=8, hidden_size=768, num_attention_heads=8,
    num_key_value_heads=2, head_dim=128, moe_intermediate_size=256, num_experts=32,
    num_experts_per_tok=4, vocab_size=32768, max_position_embeddings=4096,
    intermediate_size=2048,
)

#: CPU tests: head_dim 128 and 128-wide experts so FP8 128x128 blocks and W4A16 groups fit;
#: 4 heads / 2 KV groups / 4 experts so TP=2 and EP=2 split evenly.
QWEN3_MOE_TINY = Qwen3MoEPreset(
    name="qwen3-moe-tiny", num_layers=2, hidden_size=128, num_attention_heads=4,
    num_key_value_heads=2, head_dim=128, moe_intermediate_size=128, num_experts=4,
    num_experts_per_tok=2, vocab_size=256, max_position_embeddings=256,
    intermediate_size=256,
)

PRESETS = {p.name: p for p in (QWEN3_30B_A3B, QWEN3_MOE_200M, QWEN3_MOE_TINY)}


def get_preset(name: str) -> Qwen3MoEPreset:
    if name not in PRESETS:
        raise ValueError(f"unknown model preset {name!r} (--model); choose one of "
                         f"{', '.join(PRESETS)}")
    return PRESETS[name]
