"""The one-pass gated activation gives torch's gated_activation: bit for bit on the GPU, whose
expf is torch's; under the interpreter numpy's exp may move a value by one bf16 ulp."""
import pytest
import torch

from megatron_qarl.quant.ops import gated_activation
from qarl_kernels.swiglu import swiglu_bf16


# one-row programs up to 32 rows, 16-row programs past them; F not a multiple of 128
@pytest.mark.parametrize("rows,ffn", [(1, 24), (5, 256 + 40), (40, 130), (0, 128)])
@pytest.mark.parametrize("with_probs", [True, False])
def test_equals_gated_activation(rows, ffn, with_probs, device):
    torch.manual_seed(0)
    h = (4 * torch.randn(rows, 2 * ffn, device=device)).bfloat16()
    probs = torch.rand(rows, device=device) if with_probs else None
    got = swiglu_bf16(h, probs)
    want = gated_activation(h, probs if with_probs else torch.ones(rows, device=device))
    assert got.shape == want.shape and got.dtype == torch.bfloat16
    if device.type == "cuda":
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got, want, rtol=2**-7, atol=0)


def test_bad_input_names_the_tensor(device):
    h = torch.zeros(4, 6, device=device, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="h: shape"):
        swiglu_bf16(h[:, :5])
    with pytest.raises(ValueError, match="probs: shape"):
        swiglu_bf16(h, torch.ones(3, device=device))
