"""Start-up errors name the flag and a fix: groups straddling shards, experts vs EP, schemes a
module cannot take. And a start-up warns of nothing Megatron deprecates."""
import warnings

import pytest
import torch

from megatron_qarl.layers import parse_targets
from megatron_qarl.layers.linear import QuantColumnParallelLinear
from megatron_qarl.models import QWEN3_30B_A3B, build_model
from megatron_qarl.quant import QuantizationError, get_scheme

from tiny_qwen3 import build_tiny, tiny_config


def build_30b(scheme, targets="experts", **parallel):
    """On the meta device: were a refusal lost, the test fails instead of allocating 30B
    parameters on the CPU (which took a worker past 14 GB before it was stopped)."""
    config = QWEN3_30B_A3B.transformer_config(**parallel)
    with torch.device("meta"):
        return build_model(config, scheme, targets=targets, **QWEN3_30B_A3B.model_kwargs())


def test_w4a16_group_straddling_expert_tp_shards_is_rejected_before_allocation():
    # 768 / 4 = 192 is not a multiple of 128: raised before any 30B weight exists
    with pytest.raises(QuantizationError, match=r"--expert-tensor-parallel-size 4.*192.*"
                                                 r"--rollout-quant w4a16-g64.*--expert-model-parallel"):
        build_30b("w4a16", tp=1, ep=1, etp=4)


def test_fp8_blocks_need_128_rows_per_expert_tp_rank():
    with pytest.raises(QuantizationError, match=r"experts.linear_fc1.*--expert-tensor-parallel"):
        build_30b("fp8-block", tp=1, ep=1, etp=4)


def test_int8_per_channel_scale_cannot_span_row_parallel_shards():
    with pytest.raises(QuantizationError, match=r"linear_proj.*--tensor-model-parallel-size 2"):
        build_30b("int8", targets="experts+attention", tp=2, ep=1, etp=1)


@pytest.mark.parametrize("option, message", [
    ({"activation_func_clamp_value": 7.0}, "unset activation_func_clamp_value"),
    ({"glu_linear_offset": 1.0}, "unset glu_linear_offset"),
    ({"moe_layer_freq": [1, 0]}, "moe_layer_freq .1, 0.: this spec makes every layer an MoE"),
    # Megatron would scale fc1's input by the prob and the experts fc2's output once more
    ({"moe_apply_probs_on_input": True}, "support neither --moe-apply-probs-on-input"),
    ({"add_bias_linear": True}, r"nor expert biases \(--add-bias-linear\)"),
])
def test_megatron_options_the_quantized_layers_do_not_compute_are_refused(single_process, option,
                                                                          message):
    """They built, and the experts computed another function than Megatron's SequentialMLP
    (or every layer was MoE) without a word."""
    with pytest.raises(ValueError, match=message):
        build_tiny("w4a16", **option)


def test_experts_not_divisible_by_ep(single_process):
    with pytest.raises(ValueError, match=r"4 experts.*--expert-model-parallel-size 3"):
        build_tiny("w4a16", expert_model_parallel_size=3)


def test_fp8_attention_needs_whole_head_blocks(single_process):
    with pytest.raises(QuantizationError, match=r"kv_channels \(the head dim; the trainer's "
                       r"--model preset sets it\) that is a multiple of 128"):
        build_tiny("fp8-block", targets="experts+attention", kv_channels=64)


def test_quantized_linear_refuses_scheme_none(single_process):
    """(Grouped experts take it: bf16 experts with --moe-grouped-gemm.)"""
    config = tiny_config()
    with pytest.raises(QuantizationError,
                       match=r"scheme 'none'.*--no-aligned-learner or --rollout-quant none"):
        QuantColumnParallelLinear(config.hidden_size, 64, scheme=get_scheme("none"),
                                  config=config, init_method=config.init_method,
                                  tp_comm_buffer_name="qkv")


def test_unknown_target_names_the_flag():
    with pytest.raises(ValueError, match="--quant-targets"):
        parse_targets("experts+router")


def test_a_preset_config_takes_no_deprecated_megatron_default():
    """megatron-core 0.16.1's TransformerConfig warns at every build that its own default
    cuda_graph_scope ("full") is deprecated; the presets pass what it stands for."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = QWEN3_30B_A3B.transformer_config(tp=1, ep=1)
    assert [str(w.message) for w in caught if "deprecated" in str(w.message)] == []
    assert config.cuda_graph_scope == []


def test_the_30b_router_computes_its_logits_as_sglang_does_without_megatrons_warning():
    """128 experts with moe_router_dtype unset make megatron-core warn at every build; the
    preset keeps the gate GEMM in the params dtype on purpose (SGLang and HF run it in bf16)
    and silences only that warning, which a config asking for fp32 routing never raises."""
    for router_dtype in (None, "fp32"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            config = QWEN3_30B_A3B.transformer_config(tp=1, ep=1, moe_router_dtype=router_dtype)
        assert [str(w.message) for w in caught if "experts" in str(w.message)] == []
        assert config.moe_router_dtype == router_dtype
    with warnings.catch_warnings(record=True) as caught:  # the filter ends with the build
        warnings.simplefilter("always")
        QWEN3_30B_A3B.transformer_config(tp=1, ep=1)
        warnings.warn("Using a large number of experts (e.g. >=32) without fp32 routing.")
    assert len([w for w in caught if "experts" in str(w.message)]) == 1


def test_an_unsplit_weight_the_group_does_not_divide_names_the_group_not_the_split(
        single_process):
    """At expert-TP 1 no group straddles ranks: the fix is another group or fewer targets, not
    a lower split size."""
    with pytest.raises(QuantizationError,
                       match=r"experts.linear_fc2 under .* 96 input columns are not a multiple "
                             r"of the quantization group 128.*--quant-targets") as caught:
        build_tiny("w4a16", targets="experts", moe_ffn_hidden_size=96)
    assert "straddle" not in str(caught.value)
