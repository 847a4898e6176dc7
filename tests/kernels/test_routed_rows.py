"""Grouped kernels fed rows padded past the counts (a fixed-size token exchange's capacity)
with routed_rows, the rows routing is expected to fill: they choose their tiles for those rows,
the padding changes no routed row, and a routing that fills more rows than expected stays
exact (the grid covers x)."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import fp8_gemm, fp8_quantize, w4a16_gemm
from qarl_kernels.fp8_quantize import fp8_block_quantize, fp8_quantize_activation, \
    fp8_quantize_swiglu
from qarl_kernels.w4a16_gemm import W4A16Config, w4a16_grouped_matmul, w4a16_swiglu_experts

COUNTS = [3, 0, 6, 1]  # 10 routed rows
CAPACITY = 40  # e.g. 20 gathered tokens x top-2


def _padded(k, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(CAPACITY, k, generator=g).bfloat16().to(device)
    probs = torch.rand(CAPACITY, generator=g).to(device)
    return x, probs


def _spy(monkeypatch, module, name, seen):
    rule = getattr(module, name)

    def spying(rows, *args):
        seen.append(rows)
        return rule(rows, *args)
    monkeypatch.setattr(module, name, spying)


def _w4a16_experts(device):
    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    fc1 = scheme.quantize_weight(torch.randn(4, 2 * 64, 64, device=device))
    fc2 = scheme.quantize_weight(torch.randn(4, 64, 64, device=device))
    return fc1, fc2


def test_w4a16_tiles_for_the_routed_rows(device, monkeypatch):
    fc1, fc2 = _w4a16_experts(device)
    tokens = torch.tensor(COUNTS)
    x, probs = _padded(64, device)
    routed = sum(COUNTS)
    exact = w4a16_swiglu_experts(x[:routed], fc1, fc2, tokens, probs[:routed])
    seen = []
    _spy(monkeypatch, w4a16_gemm, "default_config", seen)
    padded = w4a16_swiglu_experts(x, fc1, fc2, tokens, probs, routed_rows=routed)
    assert seen and set(seen) == {routed}  # fc1 + SwiGLU's and fc2's tiles
    assert padded.shape[0] == CAPACITY
    assert torch.equal(padded[:routed], exact)  # the same tiles: the same bits


@pytest.mark.parametrize("routed_rows", [4, 10, CAPACITY])
@pytest.mark.parametrize("config", [None, W4A16Config(16, 16, split_k=2)])
def test_w4a16_more_routed_rows_than_expected(routed_rows, config, device, assert_gemm_close):
    """Every row of x routed (the most a skewed routing can fill) under any estimate: at 4,
    the 16-row tiles of 4 rows need 6 row tiles, 2 more than 4 rows could (with split K too,
    whose slices add into the rows with atomics)."""
    fc1, _ = _w4a16_experts(device)
    tokens = torch.tensor([17, 17, 3, 3])
    x, _ = _padded(64, device, seed=1)
    got = w4a16_grouped_matmul(x, fc1, tokens, config, routed_rows=routed_rows)
    assert_gemm_close(got, fc1.scheme.reference_grouped_matmul(x, fc1, tokens))


@pytest.mark.parametrize("routed_rows", [4, CAPACITY])
def test_fp8_more_routed_rows_than_expected(routed_rows, device, assert_gemm_close):
    """As for W4A16: at 4, the grid is capped at 4 row tiles of 32 rows and these counts need
    5, so a program walks on to a second. The tiles are fixed: the decode rule would give 4
    routed rows other tiles, whose tensor-core sums may round differently on the GPU."""
    scheme = get_scheme("fp8-block")
    torch.manual_seed(0)
    qweight = fp8_block_quantize(torch.randn(4, 128, 128, device=device), scheme)
    tokens = torch.tensor([33, 1, 3, 3])
    x, _ = _padded(128, device, seed=2)
    tiles = (32, 128, 4, 4)
    want = fp8_gemm.fp8_block_grouped_linear(x, qweight, tokens, tiles)
    got = fp8_gemm.fp8_block_grouped_linear(x, qweight, tokens, tiles, routed_rows=routed_rows)
    assert torch.equal(got, want)  # the same tiles: the same bits
    assert_gemm_close(got, scheme.reference_grouped_matmul(x, qweight, tokens))


def test_fp8_tiles_for_the_routed_rows(device, monkeypatch, assert_gemm_close):
    scheme = get_scheme("fp8-block")
    torch.manual_seed(0)
    fc1 = fp8_block_quantize(torch.randn(4, 2 * 128, 128, device=device), scheme)
    fc2 = fp8_block_quantize(torch.randn(4, 128, 128, device=device), scheme)
    tokens = torch.tensor(COUNTS)
    x, probs = _padded(128, device)
    routed = sum(COUNTS)
    exact = fp8_gemm.fp8_swiglu_experts(x[:routed], fc1, fc2, tokens, probs[:routed])
    seen = []
    monkeypatch.setattr(fp8_gemm, "_decode_tiles",
                        lambda rows, experts, k, rule=fp8_gemm._decode_tiles:
                        seen.append(rows) or rule(rows, experts, k))
    padded = fp8_gemm.fp8_swiglu_experts(x, fc1, fc2, tokens, probs, routed_rows=routed)
    assert seen == [routed] * 2
    assert torch.equal(padded[:routed], exact)


@pytest.mark.parametrize("counts, routed_rows", [(COUNTS, None), (COUNTS, 2),
                                                 ([17, 17, 3, 3], 4)])
def test_fp8_quantizers_of_padded_rows(counts, routed_rows, device):
    """With the counts, the quantizers write the routed rows as without them (and skip the
    rest: the GEMM never reads it). With routed_rows too, the grid covers twice those rows in
    blocks of 4: one or two programs, which walk on over the 3 and 10 routed blocks."""
    tokens = torch.tensor(counts)
    routed = sum(counts)
    x, _ = _padded(256, device)
    padded = dict(counts=tokens, routed_rows=routed_rows, block_rows=4)
    for got, want in [(fp8_quantize_activation(x, **padded), fp8_quantize_activation(x)),
                      (fp8_quantize_swiglu(x, **padded), fp8_quantize_swiglu(x))]:
        assert torch.equal(got[0][:routed].view(torch.uint8), want[0][:routed].view(torch.uint8))
        assert torch.equal(got[1][:routed], want[1][:routed])


def test_fp8_quantizer_stops_at_x_where_counts_sum_past_it(device, guard_outputs):
    """Counts summing past x's rows (a caller's error the wrapper cannot see without a host
    sync) walk no further than x (expert_tiles.routed_row_end): nothing is written past the
    codes or the scales, and x's rows are quantized as without counts."""
    guarded = guard_outputs(fp8_quantize)
    x, _ = _padded(48, device)
    q, scale = fp8_quantize_activation(x, counts=torch.tensor([30, 11]), routed_rows=CAPACITY)
    assert guarded.untouched()
    want_q, want_scale = fp8_quantize_activation(x)
    assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
    assert torch.equal(scale, want_scale)


def test_fp8_quantizer_routed_rows_needs_counts(device):
    x, _ = _padded(128, device)
    with pytest.raises(ValueError, match="routed_rows needs counts"):
        fp8_quantize_activation(x, routed_rows=10)


@pytest.mark.parametrize("bad", [0, CAPACITY + 1, 2.5, True])
def test_bad_routed_rows_is_named(bad, device):
    fc1, _ = _w4a16_experts(device)
    x, _ = _padded(64, device)
    with pytest.raises(ValueError, match="routed_rows="):
        w4a16_grouped_matmul(x, fc1, torch.tensor(COUNTS), routed_rows=bad)


def test_tiles_are_chosen_for_the_routed_rows_up_to_all_of_x():
    """checks.tile_rows: routed_rows from 1 to all of x's rows (every row routed is a valid
    estimate), x's rows without one, and an empty x's none."""
    from qarl_kernels.checks import tile_rows
    assert [tile_rows(CAPACITY, r) for r in (1, 10, CAPACITY, None)] == [1, 10, CAPACITY, CAPACITY]
    assert tile_rows(0, 10) == 0
