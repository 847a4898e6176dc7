"""The SwiGLU that writes fc2's FP8 input gives the unfused path's codes and scales: torch's
gated activation, then the 1x128 activation quantizer (bit for bit on the GPU, whose expf is
torch's; the interpreter's exp is numpy's, so there the activation may move by one bf16 ulp,
and a code by one e4m3 step)."""
import pytest
import torch

from megatron_qarl.quant.fp8_block import dequantize_activation
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels.fp8_quantize import fp8_quantize_activation, fp8_quantize_swiglu


def _assert_same_quantized(got, want, device):
    (q, scale), (want_q, want_scale) = got, want
    assert q.shape == want_q.shape and q.dtype == torch.float8_e4m3fn
    assert scale.shape == want_scale.shape and scale.stride() == want_scale.stride()
    if device.type == "cuda":
        assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
        assert torch.equal(scale, want_scale)
    else:
        torch.testing.assert_close(scale, want_scale, rtol=2**-7, atol=0)
        torch.testing.assert_close(dequantize_activation(q, scale),
                                   dequantize_activation(want_q, want_scale),
                                   rtol=2**-3, atol=0)


@pytest.mark.parametrize("rows,ffn", [(1, 24), (17, 256 + 40), (0, 128)])
def test_fused_equals_activation_then_quantizer(rows, ffn, device):
    torch.manual_seed(0)
    h = (4 * torch.randn(rows, 2 * ffn, device=device)).bfloat16()
    if rows > 1:
        h[1, :ffn] = 0.0  # a token whose activation is all zeros: the eps scale
    want = fp8_quantize_activation(reference_gated_activation(h))
    _assert_same_quantized(fp8_quantize_swiglu(h), want, device)


def test_bad_input_names_the_tensor(device):
    h = torch.zeros(4, 6, device=device, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="h: shape"):
        fp8_quantize_swiglu(h[:, :5])
    with pytest.raises(ValueError, match="h: dtype"):
        fp8_quantize_swiglu(h.float())
