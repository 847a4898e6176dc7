import pytest
import torch

from megatron_qarl.quant import QuantizationError, get_scheme
from qarl_kernels.expert_masters import master_table
from qarl_kernels.w4a16_lanes import lane_codes, to_lane_order
from qarl_kernels.w4a16_quantize import lane_order_applies, w4a16_quantize


def _hard_weight(shape, dtype, group, device):
    """Random rows of different magnitudes plus the edge cases of the grid."""
    torch.manual_seed(0)
    w = torch.randn(shape) * torch.rand(*shape[:-1], 1) * 3
    w[..., 0, :group] = 0.0                                   # all-zero group: scale 0
    w[..., 1, :group] = torch.arange(group) * 0.5 - 8.0       # exact .5 ties: round to even
    if dtype == torch.float32:
        w[..., 2, :group] = 1e-39                             # subnormal scale
        w[..., 3, :group] = w[..., 3, :group].clamp(-4, 4)
        w[..., 3, 5] = 4.826171875  # amax * fp32(1/7) and amax / 7 round to different scales
    return w.to(dtype).to(device)


@pytest.mark.parametrize("group", [32, 64, 128])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_bit_identical_to_reference(group, dtype, device):
    scheme = get_scheme(f"w4a16-g{group}")
    w = _hard_weight((3, 9, 2 * group), dtype, group, device)
    got, want = w4a16_quantize(w, scheme), scheme.quantize_weight(w)
    assert torch.equal(got.data, want.data)
    assert torch.equal(got.scale.view(torch.int16), want.scale.view(torch.int16))
    assert got.shape == want.shape and got.scheme is scheme


def test_single_group_single_row(device):
    scheme = get_scheme("w4a16-g32")
    w = torch.randn(1, 32, device=device)
    assert torch.equal(w4a16_quantize(w, scheme).data, scheme.quantize_weight(w).data)


def test_nonfinite_weight_is_rejected_by_name(device):
    w = torch.randn(4, 128, device=device)
    w[2, 7] = float("nan")
    with pytest.raises(QuantizationError, match="decoder.fc1.weight: 1 NaN/inf"):
        w4a16_quantize(w, get_scheme("w4a16"), name="decoder.fc1.weight")


def test_bad_layout_is_rejected(device):
    with pytest.raises(QuantizationError, match="in_features 96 is not a multiple of 128"):
        w4a16_quantize(torch.randn(4, 96, device=device), get_scheme("w4a16"))
    with pytest.raises(QuantizationError, match="dtype torch.int32"):
        w4a16_quantize(torch.ones(4, 128, dtype=torch.int32, device=device),
                       get_scheme("w4a16"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_lane_order_written_beside_the_codes(dtype, device):
    """The fused lane-order words are the reorder's of the serving codes, and become the
    memo the Hopper kernels read instead of reordering."""
    w = _hard_weight((2, 11, 384), dtype, 128, device)
    qweight = w4a16_quantize(w, get_scheme("w4a16"), lane_order=True)
    assert torch.equal(qweight.data, get_scheme("w4a16").quantize_weight(w).data)
    assert torch.equal(qweight.lane_codes[1], to_lane_order(qweight.data))
    assert lane_codes(qweight) is qweight.lane_codes[1]


def test_lane_order_only_where_the_hopper_kernels_read_it(device):
    w = torch.randn(2, 8, 256, device=device)
    made = w4a16_quantize(w, get_scheme("w4a16")).lane_codes is not None
    hopper = device.type == "cuda" and torch.cuda.get_device_capability() == (9, 0)
    assert made == lane_order_applies(master_table(w), 128) == hopper
    assert lane_order_applies(master_table(list(w)), 128) == hopper  # the experts' masters
    assert not lane_order_applies(master_table(w[0]), 128)  # dense weights: at a decode call
    assert not lane_order_applies(master_table(w), 64)
    with pytest.raises(ValueError, match="lane_order=True for experts.fc1 with group size 64"):
        w4a16_quantize(w, get_scheme("w4a16-g64"), name="experts.fc1", lane_order=True)
