"""W4A16 codes, scales and packing against compressed-tensors (an independent consumer)."""
import pytest
import torch
from compressed_tensors.compressors.pack_quantized.helpers import pack_to_int32, unpack_from_int32

from megatron_qarl.quant import W4A16, QuantizationError, pack_int4, unpack_int4

SHAPES = [(8, 128), (64, 256), (48, 384), (3, 1024)]


def _weight(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 0.02).to(dtype)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("group", [32, 64, 128])
def test_compressed_tensors_decompresses_our_tensors_to_our_weights(shape, group):
    from compressed_tensors.quantization.lifecycle.forward import dequantize
    from compressed_tensors.quantization import QuantizationArgs

    scheme = W4A16(group)
    qw = scheme.quantize_weight(_weight(shape), "w")
    tensors = scheme.serving_tensors("m", qw)
    codes = unpack_from_int32(tensors["m.weight_packed"], 4, torch.Size(tensors["m.weight_shape"].tolist()))
    args = QuantizationArgs(num_bits=4, type="int", symmetric=True, strategy="group", group_size=group)
    theirs = dequantize(codes, scale=tensors["m.weight_scale"], args=args, dtype=torch.float32)
    assert torch.equal(codes, scheme.codes(qw))
    # compressed-tensors multiplies in the scale's dtype (bf16): it rounds each product once,
    # exactly what SGLang's int4 kernel does when it forms bf16((nibble - 8) * scale).
    assert torch.equal(theirs, qw.dequantize().to(torch.bfloat16).float())


@pytest.mark.parametrize("shape", SHAPES)
def test_compressed_tensors_packing_unpacks_with_ours(shape):
    g = torch.Generator().manual_seed(1)
    codes = torch.randint(-8, 8, shape, generator=g, dtype=torch.int8)
    assert torch.equal(unpack_int4(pack_to_int32(codes, 4)), codes)
    assert torch.equal(pack_int4(codes), pack_to_int32(codes, 4))


def test_nibble_layout_low_nibble_first():
    codes = torch.tensor([[-8, -7, 0, 1, 2, 3, 4, 7]], dtype=torch.int8)
    word = int(pack_int4(codes)[0, 0]) & 0xFFFFFFFF
    assert [(word >> (4 * j)) & 0xF for j in range(8)] == [0, 1, 8, 9, 10, 11, 12, 15]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("group", [32, 128])
def test_requantizing_the_dequantized_weight_is_idempotent(dtype, group):
    scheme = W4A16(group)
    qw = scheme.quantize_weight(_weight((64, 512), dtype), "w")
    again = scheme.quantize_weight(qw.dequantize(), "w")
    assert torch.equal(again.data, qw.data) and torch.equal(again.scale, qw.scale)


def test_codes_use_the_bf16_rounded_scale():
    scheme = W4A16(32)
    w = _weight((16, 64))
    qw = scheme.quantize_weight(w, "w")
    assert qw.scale.dtype == torch.bfloat16
    s = qw.scale.float().repeat_interleave(32, -1)
    expected = torch.round(w / s).clamp(-8, 7)
    assert torch.equal(scheme.codes(qw).float(), expected)
    # error bound: half a step of the rounded scale
    assert ((qw.dequantize() - w).abs() <= s / 2 + 1e-12).all()


def test_zero_groups_and_expert_stacks():
    scheme = W4A16(128)
    w = _weight((4, 8, 256))
    w[1, :, :128] = 0
    qw = scheme.quantize_weight(w, "experts")
    assert qw.data.shape == (4, 8, 32) and qw.scale.shape == (4, 8, 2)
    assert torch.equal(qw.dequantize()[1, :, :128], torch.zeros(8, 128))
    assert torch.equal(qw[2].dequantize(), scheme.quantize_weight(w[2]).dequantize())


def test_scale_is_absmax_times_fp32_one_seventh():
    """The formula the fused quantizer reproduces bit for bit: absmax / 7 rounds to another
    bf16 scale for this absmax (0.083984375), too rarely for random weights to show."""
    w = torch.zeros(1, 64)
    w[0, 3] = 0.589599609375
    assert W4A16(64).quantize_weight(w).scale.item() == 0.08447265625


def test_serving_round_trip_and_shape_errors():
    scheme = W4A16(64)
    qw = scheme.quantize_weight(_weight((32, 128)), "w")
    tensors = scheme.serving_tensors("model.layers.0.mlp.experts.0.up_proj", qw)
    back = scheme.from_serving_tensors("model.layers.0.mlp.experts.0.up_proj", tensors)
    assert torch.equal(back.dequantize(), qw.dequantize())
    with pytest.raises(QuantizationError, match="weight_scale.*another group size"):
        W4A16(32).from_serving_tensors("model.layers.0.mlp.experts.0.up_proj", tensors)
    with pytest.raises(QuantizationError, match="missing tensor 'x.weight_packed'"):
        scheme.from_serving_tensors("x", tensors)


def test_codes_span_minus_8_to_7():
    """quantize_weight's scale (absmax / 7) never yields -8, but the code range is int4's."""
    from megatron_qarl.quant.w4a16 import int4_codes

    w = torch.zeros(1, 32)
    w[0, :2] = torch.tensor([-8.0, 7.0])
    assert int4_codes(w, torch.ones(1, 1, dtype=torch.bfloat16), 32)[0, :2].tolist() == [-8, 7]
