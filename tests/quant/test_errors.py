"""Every bad input names the tensor and the fix."""
import pytest
import torch

from megatron_qarl.quant import (FP8Block, QuantizationError, QuantizedWeight, W4A16, get_scheme,
                                 quantization_config)


def test_in_features_not_divisible_by_group():
    with pytest.raises(QuantizationError, match=r"experts\.0\.down_proj: in_features 192 is not a multiple of 128.*--rollout-quant w4a16-g64"):
        W4A16(128).quantize_weight(torch.randn(8, 192), "experts.0.down_proj")


def test_unsupported_group_size():
    with pytest.raises(QuantizationError, match="group size 100 is not supported.*--rollout-quant w4a16-g32"):
        W4A16(100)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.float8_e4m3fn])
def test_unsupported_dtype(dtype):
    with pytest.raises(QuantizationError, match=f"q_proj: dtype {dtype} cannot be quantized"):
        FP8Block().quantize_weight(torch.zeros(4, 128).to(dtype), "q_proj")


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_weights(bad):
    w = torch.randn(4, 128)
    w[2, 3] = bad
    with pytest.raises(QuantizationError, match="up_proj: 1 NaN/inf.*--lr"):
        W4A16(128).quantize_weight(w, "up_proj")


def test_not_a_matrix_and_unknown_scheme():
    with pytest.raises(QuantizationError, match="router: shape \\(128,\\) is not"):
        get_scheme("int8").quantize_weight(torch.randn(128), "router")
    with pytest.raises(QuantizationError, match="unknown quantization scheme 'w3a16'.*w4a16-g128"):
        get_scheme("w3a16")
    with pytest.raises(QuantizationError, match="no quantization_config"):
        quantization_config(get_scheme("none"))


def test_serving_configs():
    cfg = quantization_config(W4A16(64))
    weights = cfg["config_groups"]["group_0"]["weights"]
    assert (weights["num_bits"], weights["type"], weights["symmetric"], weights["strategy"],
            weights["group_size"]) == (4, "int", True, "group", 64)
    assert "re:.*self_attn.*" in cfg["ignore"]
    assert "re:.*self_attn.*" not in quantization_config(W4A16(64), quantize_attention=True)["ignore"]
    assert quantization_config(FP8Block())["weight_block_size"] == [128, 128]


@pytest.mark.parametrize("name", ["w4a16", "fp8-block", "int8"])
def test_serving_tensors_lie_on_the_weight_device(name):
    """A publish bucket flattens its tensors with one torch.cat: W4A16's weight_shape was made
    on the CPU beside CUDA codes, and the first W4A16 publish on a GPU failed there."""
    scheme = get_scheme(name)
    qweight = scheme.quantize_weight(torch.randn(256, 256))
    on_meta = QuantizedWeight(qweight.data.to("meta"), qweight.scale.to("meta"), qweight.shape,
                              scheme)
    tensors = scheme.serving_tensors("model.layers.0.mlp.experts.0.up_proj", on_meta)
    assert {t.device.type for t in tensors.values()} == {"meta"}


def test_w4a16_serving_tensors_flatten_into_one_bucket():
    """The publish path on the test's device (the GPU suite runs it on CUDA)."""
    from megatron_qarl.rollout.publish import plan_buckets

    device = "cuda" if torch.cuda.is_available() else "cpu"
    scheme = get_scheme("w4a16")
    tensors = scheme.serving_tensors("e.up_proj",
                                     scheme.quantize_weight(torch.randn(256, 256, device=device)))
    (bucket, ) = plan_buckets(list(tensors.items()), 1 << 20)
    assert bucket.flatten().device.type == device


def test_a_bucket_fills_to_exactly_its_budget():
    from megatron_qarl.rollout.publish import plan_buckets

    buckets = list(plan_buckets([("a", torch.zeros(8)), ("b", torch.zeros(8))], 64))
    assert [[e.name for e in b.entries] for b in buckets] == [["a", "b"]]
    assert buckets[0].nbytes == 64


@pytest.mark.parametrize("name,scale_key,bad_scale", [
    ("fp8-block", "weight_scale_inv", torch.ones(1, 1)),
    ("int8", "weight_scale", torch.ones(128)),
])
def test_serving_scales_of_another_shape_are_refused(name, scale_key, bad_scale):
    """A scale tensor of another layout was reshaped into the weight's (INT8: any numel)."""
    scheme = get_scheme(name)
    qweight = scheme.quantize_weight(torch.randn(256, 256), "layers.0.o_proj")
    tensors = scheme.serving_tensors("layers.0.o_proj", qweight)
    back = scheme.from_serving_tensors("layers.0.o_proj", tensors)
    assert torch.equal(scheme.dequantize(back), scheme.dequantize(qweight))
    tensors[f"layers.0.o_proj.{scale_key}"] = bad_scale
    with pytest.raises(QuantizationError, match=rf"layers\.0\.o_proj\.{scale_key}: shape "
                                                rf"\({bad_scale.shape[0]},.*the checkpoint is "
                                                rf"corrupt"):
        scheme.from_serving_tensors("layers.0.o_proj", tensors)


def test_w4a16_serving_shape_off_its_groups_is_refused():
    """weight_shape (48, 100) with groups of 32 loaded, and the kernel ignored inputs 96-99."""
    scheme = get_scheme("w4a16-g32")
    tensors = scheme.serving_tensors("e.up_proj", scheme.quantize_weight(torch.randn(48, 96)))
    tensors["e.up_proj.weight_shape"] = torch.tensor([48, 100])
    with pytest.raises(QuantizationError, match=r"e\.up_proj\.weight_shape: in_features 100 is "
                                                r"not a multiple of 32"):
        scheme.from_serving_tensors("e.up_proj", tensors)


@pytest.mark.parametrize("name", ["w4a16-g32", "fp8-block", "int8", "none"])
def test_the_ops_refuse_weights_and_rows_of_another_layout(name):
    """The kernels read one weight's or the stacked experts' contiguous rows, and grouped rows
    as [tokens, in]: a stacked weight in the dense op used expert 0, transposed codes gave
    numbers 54-74 off, and [T, 2, in] rows computed only x[:, 0]; all without an error."""
    from megatron_qarl.quant import ops

    scheme = get_scheme(name)
    stacked = ops.quantize_weight(scheme, torch.randn(2, 128, 128))
    x, counts = torch.randn(4, 128), torch.tensor([1, 3])
    assert ops.grouped_linear(x, stacked, counts).shape == (4, 128)
    with pytest.raises(ValueError, match=r"the dense op takes one \[out, in\] weight"):
        ops.linear(x, stacked)
    with pytest.raises(ValueError, match="the grouped op takes the experts stacked"):
        ops.grouped_linear(x, stacked[0], counts)
    with pytest.raises(ValueError, match=r"x: shape \(2, 2, 128\).*flatten the activations"):
        ops.grouped_linear(x.view(2, 2, 128), stacked, counts)
    with pytest.raises(ValueError, match=r"x: shape \(2, 2, 128\).*flatten the activations"):
        ops.swiglu_experts(x.view(2, 2, 128), stacked, stacked, counts, None)
    one = stacked[0]
    transposed = QuantizedWeight(one.data.t().contiguous().t(), one.scale, one.shape, scheme)
    with pytest.raises(ValueError, match="rows not contiguous"):
        ops.linear(x, transposed)
    with pytest.raises(ValueError, match="tokens_per_expert: negative counts"):
        ops.grouped_linear(x, stacked, torch.tensor([5, -1]))
