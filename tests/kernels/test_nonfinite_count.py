"""The weight quantizers add their NaN/inf count to a caller's counter instead of raising: the
layers' cache checks a model's weights with one host sync (quant.ops.quantize_weight)."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.fp8_quantize import fp8_block_quantize
from qarl_kernels.int8_quantize import int8_quantize
from qarl_kernels.w4a16_quantize import w4a16_quantize

QUANTIZERS = [(w4a16_quantize, "w4a16"), (fp8_block_quantize, "fp8-block"),
              (int8_quantize, "int8")]


@pytest.mark.parametrize("quantize, scheme", QUANTIZERS)
def test_count_goes_to_the_callers_counter(quantize, scheme, device):
    w = torch.randn(2, 3, 256, device=device)  # 3 rows: 130 took 18-27 s interpreted
    counts = torch.zeros(2, dtype=torch.int32, device=device)
    want = get_scheme(scheme).quantize_weight(w)
    got = quantize(w, get_scheme(scheme), "w", nonfinite=counts[1:])
    assert torch.equal(got.data, want.data) and counts.tolist() == [0, 0]
    w[1, 2, 255] = float("nan")  # the last value
    quantize(w, get_scheme(scheme), "w", nonfinite=counts[1:])  # no raise: counted
    assert counts[0] == 0 and counts[1] > 0


@pytest.mark.parametrize("quantize, scheme", QUANTIZERS)
def test_a_counter_of_another_kind_is_refused(quantize, scheme, device):
    w = torch.randn(128, 128, device=device)
    with pytest.raises(ValueError, match="nonfinite: torch.int64 .*pass an int32 tensor"):
        quantize(w, get_scheme(scheme), "w", nonfinite=torch.zeros(1, dtype=torch.int64,
                                                                    device=device))
    with pytest.raises(ValueError, match=r"nonfinite: torch.int32 \(2,\)"):
        quantize(w, get_scheme(scheme), "w", nonfinite=torch.zeros(2, dtype=torch.int32,
                                                                    device=device))
