"""The schemes' fused no-grad experts ops (fc1, the SwiGLU that writes fc2's quantized input,
fc2) equal quant.ops' composition of the grouped op and gated_activation, past a padding row
(bit for bit on the GPU for INT8, whose GEMM sums exactly)."""
import pytest
import torch

from megatron_qarl.quant import get_scheme, ops
from qarl_kernels.fp8_gemm import fp8_block_grouped_linear, fp8_swiglu_experts
from qarl_kernels.int8_gemm import int8_grouped_linear, int8_swiglu_experts


@pytest.mark.parametrize("scheme_name,grouped,fused", [
    ("fp8-block", fp8_block_grouped_linear, fp8_swiglu_experts),
    ("int8", int8_grouped_linear, int8_swiglu_experts)])
def test_experts_op_equals_the_composed_experts(scheme_name, grouped, fused, device,
                                                assert_gemm_close, monkeypatch):
    torch.manual_seed(0)
    scheme = get_scheme(scheme_name)
    ffn, hidden = 160, 128
    fc1 = scheme.quantize_weight(0.1 * torch.randn(3, 2 * ffn, hidden, device=device))
    fc2 = scheme.quantize_weight(0.1 * torch.randn(3, hidden, ffn, device=device))
    tokens = torch.tensor([5, 0, 4])
    x = torch.randn(10, hidden, device=device).bfloat16()
    probs = torch.rand(10, device=device)
    # the composition with the CUDA registration's grouped op on either device
    monkeypatch.setitem(ops._GROUPED, (type(scheme).__name__, device.type), grouped)
    want = ops.composed_swiglu_experts(x, fc1, fc2, tokens, probs)[:9]
    got = fused(x, fc1, fc2, tokens, probs, routed_rows=9)[:9]
    if device.type == "cuda" and scheme_name == "int8":
        assert torch.equal(got, want)
    else:
        assert_gemm_close(got, want)
