"""Row splits and concatenations of quantized weights keep each scale's rows whole: FP8's
128-row blocks, whose last may be partial (300 rows: blocks of 128, 128, 44). The block was
taken from the shapes, 300 / 3 scale rows = 100: a split at 100 passed and dequantized wrongly,
one at 128 was refused."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from megatron_qarl.quant.rows import ReshardError, cat, split_rows


def _fp8_weight(rows=300, cols=256):
    scheme = get_scheme("fp8-block")
    weight = torch.randn(rows, cols, generator=torch.Generator().manual_seed(0))
    return scheme, scheme.quantize_weight(weight)


def test_fp8_rows_split_at_block_edges_and_dequantize_as_the_whole():
    scheme, q = _fp8_weight()
    whole = scheme.dequantize(q)
    top, bottom = split_rows(q, [128, 172])
    torch.testing.assert_close(scheme.dequantize(top), whole[:128], rtol=0, atol=0)
    torch.testing.assert_close(scheme.dequantize(bottom), whole[128:], rtol=0, atol=0)
    torch.testing.assert_close(scheme.dequantize(cat([top, bottom], 0)), whole, rtol=0, atol=0)


def test_fp8_rows_cut_inside_a_block_are_refused():
    _, q = _fp8_weight()
    with pytest.raises(ReshardError, match="128-row quantization block"):
        split_rows(q, [100, 200])
    _, short = _fp8_weight(rows=100)
    _, rest = _fp8_weight(rows=200)
    with pytest.raises(ReshardError, match="whole 128-row quantization blocks"):
        cat([short, rest], 0)


def test_fp8_columns_cat_in_whole_blocks_only():
    """Two 64-column shards' [*, 1] scales made a [*, 2] scale for 128 columns, one block:
    dequantized 430 off (no layout makes such shards today: layers/layout.py refuses them)."""
    scheme, q = _fp8_weight(rows=128, cols=256)
    left, right = _fp8_weight(rows=128, cols=128)[1], _fp8_weight(rows=128, cols=128)[1]
    joined = cat([left, right], 1)
    assert joined.shape == (128, 256)
    torch.testing.assert_close(scheme.dequantize(joined),
                               torch.cat([scheme.dequantize(left), scheme.dequantize(right)], 1),
                               rtol=0, atol=0)
    narrow = _fp8_weight(rows=128, cols=64)[1]
    with pytest.raises(ReshardError, match=r"parts of \[64, 64\] columns; all but the last must "
                                           r"be whole 128-column quantization blocks"):
        cat([narrow, narrow], 1)


@pytest.mark.parametrize("scheme_name", ["w4a16", "int8"])
def test_per_row_scales_split_anywhere(scheme_name):
    scheme = get_scheme(scheme_name)
    q = scheme.quantize_weight(torch.randn(300, 256, generator=torch.Generator().manual_seed(1)))
    top, bottom = split_rows(q, [100, 200])
    torch.testing.assert_close(scheme.dequantize(cat([top, bottom], 0)), scheme.dequantize(q),
                               rtol=0, atol=0)
