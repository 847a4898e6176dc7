"""The lane order of the Hopper W4A16 kernel: every nibble lands where its docstring says, and
the memo follows the codes it was made from."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels.w4a16_lanes import lane_codes, to_lane_order


def _nibble(words: torch.Tensor, word: torch.Tensor, bit: torch.Tensor) -> torch.Tensor:
    return (words[..., word] >> bit) & 0xF


def test_each_input_lands_in_its_lanes_word():
    torch.manual_seed(0)
    data = torch.randint(-2**31, 2**31 - 1, (3, 5, 48), dtype=torch.int32)  # K = 384
    lanes = to_lane_order(data)
    k = torch.arange(384)
    block, v = k // 128, k % 128
    h, v = v // 64, v % 64  # half, then input within the half: 8 * (4i + j) + 2q + t
    i, j, q, t = v // 32, (v // 8) % 4, (v % 8) // 2, v % 2
    want = _nibble(data, k // 8, 4 * (k % 8))
    got = _nibble(lanes, 16 * block + 4 * q + 2 * h + i, 4 * j + 16 * t)
    assert torch.equal(got, want)
    assert lanes.dtype == torch.int32 and lanes.shape == data.shape


def test_rejects_a_partial_block():
    with pytest.raises(ValueError, match="whole 128-input blocks"):
        to_lane_order(torch.zeros(2, 4, 8, dtype=torch.int32))  # 64 inputs


def test_memo_is_made_once_and_follows_in_place_writes():
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(2, 64, 256))
    first = lane_codes(qweight)
    assert lane_codes(qweight) is first
    qweight.data[0, 0, 0] ^= 0xF  # codes written in place: the memo is stale
    again = lane_codes(qweight)
    assert again is not first and torch.equal(again, to_lane_order(qweight.data))
