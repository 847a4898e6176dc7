"""Scheme 'none''s per-step copy of the masters in one pass: NoQuant.quantize_weight's bf16
weight (the master itself when it is bf16), its NaN/inf counted into the caller's counter or
raised naming the weight."""
import pytest
import torch

from megatron_qarl.quant import NoQuant, QuantizationError
from qarl_kernels.bf16_quantize import BLOCK, bf16_quantize


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(3, 40, 24), (BLOCK + 5, 2), (0, 8)])
def test_equals_noquant(dtype, shape, device):
    torch.manual_seed(0)
    w = torch.randn(shape, device=device).to(dtype)
    got, want = bf16_quantize(w, NoQuant()), NoQuant().quantize_weight(w)
    assert got.data.dtype == torch.bfloat16 and got.shape == want.shape
    assert torch.equal(got.data, want.data) and got.scale is None
    if w.numel():
        assert (got.data.data_ptr() == w.data_ptr()) == (dtype == torch.bfloat16)


def test_counts_nonfinite_into_the_callers_counter(device):
    w = torch.randn(2, BLOCK + 7, device=device)
    w[0, 3], w[1, BLOCK + 1], w[1, 5] = float("nan"), float("inf"), -float("inf")
    w[0, 9] = float("nan")  # two in one program's block: each counted, not the block once
    counter = torch.zeros(1, dtype=torch.int32, device=device)
    bf16_quantize(w, NoQuant(), nonfinite=counter)
    bf16_quantize(w.bfloat16(), NoQuant(), nonfinite=counter)
    assert int(counter) == 8


def test_nonfinite_raises_naming_the_weight(device):
    w = torch.ones(4, 8, device=device)
    w[2, 2] = float("nan")
    with pytest.raises(QuantizationError, match="experts.linear_fc1: 1 NaN/inf"):
        bf16_quantize(w, NoQuant(), "experts.linear_fc1")
    bf16_quantize(w, NoQuant(), check_finite=False)  # unchecked: no error
