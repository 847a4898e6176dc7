"""A tiny Qwen3-MoE model builds and trains under each scheme; gradients reach the masters."""
import pytest
import torch

from megatron_qarl.checkpoint.hf_config import dims_from_config
from megatron_qarl.checkpoint.megatron_layout import all_chunks
from megatron_qarl.checkpoint.model_preset import hf_config_from_preset, preset_from_hf_config
from megatron_qarl.layers import (
    QuantColumnParallelLinear, QuantizedGroupedExperts, QuantRowParallelLinear,
    install_quant_refresh_hook,
)
from megatron_qarl.models import QWEN3_30B_A3B, QWEN3_MOE_TINY, build_model, get_preset
from megatron_qarl.quant import SCHEME_NAMES

from tiny_qwen3 import batch, build_tiny, loss_of, tiny_config, train_losses

QUANTIZED = (QuantColumnParallelLinear, QuantRowParallelLinear, QuantizedGroupedExperts)


@pytest.mark.parametrize("scheme", SCHEME_NAMES)
def test_trains_under_each_scheme(single_process, scheme):
    model = build_tiny(scheme)
    n_quantized = sum(isinstance(m, QUANTIZED) for m in model.modules())
    assert n_quantized == (0 if scheme == "none" else 3 * 2)  # qkv, proj, experts per layer
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    install_quant_refresh_hook(opt, model)
    losses = train_losses(model, opt, 4)
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < 0.9 * losses[0], losses


def test_quantize_false_builds_megatrons_own_layers(single_process):
    """build_model(..., quantize=False): the plain model the layout errors point to."""
    model = build_model(tiny_config(), "w4a16", quantize=False, **QWEN3_MOE_TINY.model_kwargs())
    assert not any(isinstance(m, QUANTIZED) for m in model.modules())


@pytest.mark.parametrize("scheme", ["w4a16-g32", "fp8-block", "int8"])
def test_gradients_reach_every_master_weight(single_process, scheme):
    model = build_tiny(scheme)
    tokens, positions = batch()
    loss_of(model, tokens, positions).backward()
    masters = [m.weight for m in model.modules()
               if isinstance(m, (QuantColumnParallelLinear, QuantRowParallelLinear))]
    masters += [p for m in model.modules() if isinstance(m, QuantizedGroupedExperts)
                for p in m.parameters()]
    assert len(masters) == 2 * (2 + 2 * 4)
    for p in masters:
        assert p.grad is not None and p.grad.abs().sum() > 0


#: the fields of Qwen/Qwen3-30B-A3B's config.json that shape the model
QWEN3_30B_A3B_CONFIG = {
    "model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
    "vocab_size": 151936, "max_position_embeddings": 40960, "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-06, "norm_topk_prob": True, "tie_word_embeddings": False,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "router_aux_loss_coef": 0.001,
}


def test_qwen3_30b_a3b_preset_matches_hf_config():
    assert preset_from_hf_config(QWEN3_30B_A3B_CONFIG, name="qwen3-30b-a3b") == QWEN3_30B_A3B
    assert QWEN3_30B_A3B.router_aux_loss_coef == QWEN3_30B_A3B_CONFIG["router_aux_loss_coef"]
    c = QWEN3_30B_A3B.transformer_config(tp=1, ep=8, etp=1)
    assert (c.num_layers, c.hidden_size, c.num_attention_heads, c.num_query_groups,
            c.kv_channels) == (48, 2048, 32, 4, 128)
    assert (c.num_moe_experts, c.moe_router_topk, c.moe_ffn_hidden_size) == (128, 8, 768)
    assert (c.layernorm_epsilon, c.moe_aux_loss_coeff) == (1e-6, 0.001)
    assert c.moe_router_load_balancing_type == "aux_loss"
    assert (c.tensor_model_parallel_size, c.expert_model_parallel_size,
            c.expert_tensor_parallel_size, c.sequence_parallel) == (1, 8, 1, False)
    # Megatron requires sequence parallelism for MoE under TP (no config check says so here)
    assert QWEN3_30B_A3B.transformer_config(tp=2, ep=1, etp=1).sequence_parallel
    # Megatron's attention softmax upcasts to fp32 only an input its config says is bf16
    assert c.bf16 and not QWEN3_30B_A3B.transformer_config(params_dtype=torch.float32, tp=1,
                                                           ep=1, etp=1).bf16
    assert c.qk_layernorm and c.gated_linear_unit and not c.add_bias_linear
    assert c.moe_router_score_function == "softmax" and not c.moe_router_pre_softmax
    assert QWEN3_30B_A3B.model_kwargs() == dict(vocab_size=151936, max_sequence_length=40960,
                                                rotary_base=1e6)


@pytest.mark.parametrize("name, params, topk", [("qwen3-30b-a3b", 30_532_122_624, 8),
                                                 ("qwen3-moe-200m", 217_266_944, 4),
                                                 ("qwen3-moe-tiny", 854_144, 2)])
def test_each_preset_is_the_model_its_results_were_measured_on(name, params, topk):
    """The benchmarks and docs quote these models by name (Qwen3-30B-A3B's 61.1 GB of bf16,
    the 217M-parameter qwen3-moe-200m): a changed dim would change what the name measures."""
    preset = get_preset(name)
    dims = dims_from_config(hf_config_from_preset(preset))
    assert sum(chunk.numel for chunk in all_chunks(dims)) == params
    assert preset.num_experts_per_tok == topk


def test_a_presets_rope_base_reaches_the_model(single_process):
    """Every shipped preset has base 1e6; an HF model's preset (--load-hf) may not."""
    preset = QWEN3_MOE_TINY.replace(rope_theta=5e5)
    model = build_model(tiny_config(), "none", **preset.model_kwargs())
    inv_freq = model.rotary_pos_emb.inv_freq
    torch.testing.assert_close(inv_freq[1], torch.tensor(5e5 ** (-2 / 128)))


@pytest.mark.parametrize("name", ["qwen3-30b", "Qwen3-30B-A3B"])
def test_an_unknown_preset_names_the_flag_and_the_choices(name):
    with pytest.raises(ValueError, match=f"unknown model preset '{name}' \\(--model\\); choose one "
                                         f"of qwen3-30b-a3b, qwen3-moe-200m, qwen3-moe-tiny"):
        get_preset(name)


def test_pipeline_parallelism_is_refused_by_the_builder(single_process):
    """The block spec holds every layer: each pipeline stage built the whole model."""
    with pytest.raises(ValueError, match="pipeline parallelism is not supported"):
        build_tiny("w4a16-g32", pipeline_model_parallel_size=2, pipeline_dtype=torch.float32)
