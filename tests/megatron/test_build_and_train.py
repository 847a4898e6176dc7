"""A tiny Qwen3-MoE model builds and trains under each scheme; gradients reach the masters."""
import pytest
import torch

from megatron_qarl.layers import (
    QuantColumnParallelLinear, QuantizedGroupedExperts, QuantRowParallelLinear,
    install_quant_refresh_hook,
)
from megatron_qarl.models import QWEN3_30B_A3B
from megatron_qarl.quant import SCHEME_NAMES

from tiny_qwen3 import batch, build_tiny, loss_of, train_losses

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


def test_qwen3_30b_a3b_preset_matches_hf_config():
    c = QWEN3_30B_A3B.transformer_config(tp=1, ep=8, etp=1)
    assert (c.num_layers, c.hidden_size, c.num_attention_heads, c.num_query_groups,
            c.kv_channels) == (48, 2048, 32, 4, 128)
    assert (c.num_moe_experts, c.moe_router_topk, c.moe_ffn_hidden_size) == (128, 8, 768)
    assert c.qk_layernorm and c.gated_linear_unit and not c.add_bias_linear
    assert c.moe_router_score_function == "softmax" and not c.moe_router_pre_softmax
    assert QWEN3_30B_A3B.model_kwargs() == dict(vocab_size=151936, max_sequence_length=40960,
                                                rotary_base=1e6)


def test_pipeline_parallelism_is_refused_by_the_builder(single_process):
    """The block spec holds every layer: each pipeline stage built the whole model."""
    with pytest.raises(ValueError, match="pipeline parallelism is not supported"):
        build_tiny("w4a16-g32", pipeline_model_parallel_size=2, pipeline_dtype=torch.float32)
