"""KV-cache row writes equal index_copy_ bit for bit, for any dtype and a ragged last block,
and bad arguments are refused with the shapes named."""
import pytest
import torch

from qarl_kernels.write_rows import write_rows


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.int64])
def test_equals_index_copy(device, dtype):
    g = torch.Generator().manual_seed(0)
    dst = (torch.randn(9, 3, 2, 5, generator=g) * 100).to(dtype).to(device)
    src = (torch.randn(4, 3, 2, 5, generator=g) * 100).to(dtype).to(device)
    index = torch.tensor([7, 0, 3, 8], device=device)
    want = dst.clone().index_copy_(0, index, src)
    got = write_rows(dst, index, src, block=16)  # 30 or 60 or 120 bytes a row: ragged blocks
    assert got is dst and torch.equal(got, want)


def test_refuses_mismatched_rows(device):
    dst = torch.zeros(4, 6, device=device)
    with pytest.raises(ValueError, match="src rows of dst's shape"):
        write_rows(dst, torch.tensor([0, 1], device=device), torch.zeros(2, 5, device=device))
    with pytest.raises(ValueError, match="contiguous"):
        write_rows(dst.T, torch.tensor([0], device=device), torch.zeros(1, 4, device=device))


def test_a_strided_index_is_read_by_its_strides_and_rows_out_of_range_are_dropped(device):
    """The kernel read index[::2] as if contiguous (rows 0, 5, 6 for 5, 0, 2) and wrote rows
    past dst for an index of 8 or -1 (a review)."""
    dst = torch.zeros(8, 4, device=device)
    src = torch.arange(12.0, device=device).view(3, 4)
    table = torch.tensor([5, 9, 0, 9, 2], device=device)
    want = dst.clone().index_copy_(0, table[::2], src)
    assert torch.equal(write_rows(dst.clone(), table[::2], src), want)
    room = torch.zeros(10, 4, device=device)  # dst is rows 1..8: rows 0 and 9 must stay 0
    write_rows(room[1:9], torch.tensor([8, 0, -1], device=device), src)
    assert torch.equal(room[[0, 9]], torch.zeros(2, 4, device=device))
    assert torch.equal(room[1], src[1])
