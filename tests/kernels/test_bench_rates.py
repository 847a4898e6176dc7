"""The benchmark's rate columns (performance.md's GB/s, % of copy, TFLOP/s, % of the bf16
matmul) and its tables' shape."""
import pytest

from qarl_kernels.bench.report import Table, rate_header, rates

PEAK = {"copy_GBps": 4000.0, "bf16_TFLOPs": 500.0}


def test_rates_divide_bytes_and_flops_by_the_time_and_the_measured_ceilings():
    # 8 MB in 2 us: 4000 GB/s, the whole copy ceiling; 2 GFLOP in 2 us: 1000 TFLOP/s, 2x peak
    assert rates(2.0, 8e6, PEAK, flops=2e9) == pytest.approx([4000.0, 100.0, 1000.0, 200.0])
    assert rates(4.0, 8e6, PEAK) == pytest.approx([2000.0, 50.0])


def test_a_call_not_timed_gets_as_many_empty_cells_as_its_header():
    assert rates(None, 8e6, PEAK, flops=2e9) == [None] * len(rate_header())
    assert rates(None, 8e6, PEAK) == [None] * len(rate_header(flops=False))
    assert rate_header("W4A16", flops=False) == ["W4A16 GB/s", "W4A16 %BW"]


def test_a_row_of_another_width_than_the_header_is_refused():
    table = Table("t", ["shape", "us", *rate_header()])
    table.add("W13", 2.0, *rates(2.0, 8e6, PEAK, flops=2e9))
    assert table.rows == [["W13", "2.0", "4000.0", "100.0", "1000.0", "200.0"]]
    with pytest.raises(ValueError, match="4 cells for 6 columns"):
        table.add("W13", 2.0, *rates(2.0, 8e6, PEAK))
