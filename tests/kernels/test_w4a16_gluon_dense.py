"""Dense W4A16 calls through the Gluon kernel (one expert, K split in the kernel): the tile rule
here, the kernel on an H100 (Gluon has no CPU interpreter; test_w4a16_gluon.py compiles the
split build for sm_90 in CI)."""
import dataclasses

import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import split_k, w4a16_gluon as wg
from qarl_kernels.w4a16_gemm import DENSE_KEPT_GLUON_MAX_ROWS, w4a16_dense_gluon, w4a16_linear
from qarl_kernels.w4a16_gluon_rules import DENSE_GLUON_MAX_ROWS, gluon_dense_tiles
from qarl_kernels.w4a16_lanes import has_lane_codes

HOPPER = torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
QKV, O_PROJ, QKV_TP2, O_PROJ_TP2 = (5120, 2048), (2048, 4096), (2560, 2048), (2048, 2048)


def test_rule_follows_the_sweep():
    """Round 34's H100 fit (132 SMs): 8-token tiles split eight ways at decode sizes, larger
    tiles split only while one wave holds the programs, two groups a stage while one program
    an SM suffices."""
    assert gluon_dense_tiles(1, *QKV, 132) == (8, 64, 3, 2, 8)
    assert gluon_dense_tiles(16, *O_PROJ_TP2, 132) == (16, 64, 3, 2, 8)
    assert gluon_dense_tiles(32, *QKV, 132) == (32, 64, 3, 2, 1)  # 80 programs
    assert gluon_dense_tiles(64, *O_PROJ, 132) == (64, 64, 3, 2, 4)  # 32 programs, long K
    assert gluon_dense_tiles(128, *QKV, 132) == (64, 64, 3, 1, 1)  # 160 programs
    assert gluon_dense_tiles(256, *QKV_TP2, 132) == (64, 64, 3, 1, 1)
    assert gluon_dense_tiles(512, *O_PROJ, 132) == (128, 64, 2, 2, 1)
    assert gluon_dense_tiles(DENSE_GLUON_MAX_ROWS + 1, *QKV, 132) is None
    assert gluon_dense_tiles(8, 2048, 384, 132) is None  # three groups: no scale words


@pytest.mark.parametrize("rows,sms,tiles", [
    (8, 32, (8, 64, 3, 2, 8)), (8, 31, (8, 64, 3, 1, 4)),  # 32 programs
    (64, 128, (64, 64, 3, 2, 4)), (64, 127, (64, 64, 3, 2, 2)),
])
def test_rule_at_a_wave_of_programs(rows, sms, tiles):
    """o_proj (32 column tiles) on fewer SMs: two groups a stage while each program has an SM
    to itself, and K split while eight waves (8- and 16-token tiles) or one wave (larger ones)
    hold the programs, both up to the last program that fits."""
    assert gluon_dense_tiles(rows, *O_PROJ, sms) == tiles


@pytest.mark.parametrize("rows", [1, 3, 8, 9, 16, 31, 64, 100, 256, 300, 512])
@pytest.mark.parametrize("n,k", [QKV, O_PROJ, (192, 256), (2048, 768), (64, 512)])
def test_rule_gives_slices_of_whole_stages(rows, n, k):
    block_m, block_n, stages, groups, split = gluon_dense_tiles(rows, n, k, 132)
    assert block_m >= min(rows, 8) and block_n == 64 and split in (1, 2, 4, 8)
    assert k % (wg.GROUP * groups * split) == 0


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("rows", [1, 5, 16, 33, 100, 300])
@pytest.mark.parametrize("n,k,split", [(320, 1024, 1), (320, 1024, 2), (320, 1024, 8),
                                       (2048, 768, 2), (2048, 768, 3), (2048, 768, 6)])
def test_split_matches_reference_and_repeats(rows, n, k, split, assert_gemm_close):
    """Any split into slices of whole stages (three of W2's six groups too) is the reference's
    GEMM, and a split call repeats its bits (the slices are added in slice order, whatever
    order the programs finish in)."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(n, k, device="cuda"))
    x = torch.randn(rows, k, device="cuda").bfloat16()
    counts = torch.tensor([rows], device="cuda", dtype=torch.int32)
    block_m = gluon_dense_tiles(rows, n, k, 132)[0]
    got = [wg.w4a16_grouped_gluon(x, qweight, counts, block_m, 64, 3, split_k=split)
           for _ in range(3)]
    assert_gemm_close(got[0], scheme.reference_matmul(x, qweight))
    assert torch.equal(got[0], got[1]) and torch.equal(got[0], got[2])


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
def test_split_refuses_what_it_cannot_slice():
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(256, 768, device="cuda"))
    x = torch.randn(8, 768, device="cuda").bfloat16()
    counts = torch.tensor([8], device="cuda", dtype=torch.int32)
    with pytest.raises(ValueError, match="split_k=4"):  # six groups in four slices
        wg.w4a16_grouped_gluon(x, qweight, counts, 8, 64, 3, split_k=4)
    with pytest.raises(ValueError, match="up to 512 rows"):
        w4a16_dense_gluon(torch.randn(513, 768, device="cuda").bfloat16(), qweight)


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
@pytest.mark.parametrize("rows", [8, 64, 512])
def test_graphs_take_it_after_an_eager_call(rows, assert_gemm_close):
    """A decode graph captured after an eager warm-up runs the Gluon kernel with the rule's
    tiles (the eager call, which takes the Triton kernel, made the lane-order codes); one
    captured cold takes the Triton kernel and warns."""
    torch.manual_seed(0)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.randn(*QKV_TP2, device="cuda"))
    x = torch.randn(rows, QKV_TP2[1], device="cuda").bfloat16()
    # the K split's counters exist, as after any eager decode call of this process: a capture
    # finding none does not split K, and its sums would round unlike the eager call's (this
    # test failed so when it ran first in its pytest-xdist worker)
    split_k.split_ring(x.device)
    if rows < 256:  # from 256 the eager call reads the bf16 operand, with no Gluon to warn of
        cold = torch.cuda.CUDAGraph()
        with pytest.warns(UserWarning, match="Run one eager step before capturing"):
            with torch.cuda.graph(cold):
                got_cold = w4a16_linear(x, qweight)
        cold.replay()
    eager = w4a16_linear(x, qweight)
    assert has_lane_codes(qweight)
    warm = torch.cuda.CUDAGraph()
    with torch.cuda.graph(warm):
        got_warm = w4a16_linear(x, qweight)
    warm.replay()
    torch.cuda.synchronize()
    if rows < 256:
        assert torch.equal(got_cold, eager)
    assert torch.equal(got_warm, w4a16_dense_gluon(x, qweight))
    assert_gemm_close(got_warm, scheme.reference_matmul(x, qweight))


@pytest.mark.skipif(not HOPPER, reason="Gluon, TMA and wgmma need an SM90 GPU")
def test_kept_operand_graphs_take_it_to_64_tokens(monkeypatch):
    """With --quant-keep-operand a graph takes the Gluon kernel up to DENSE_KEPT_GLUON_MAX_ROWS
    tokens and the kept bf16 operand past them, as eager calls do from
    DENSE_KEPT_OPERAND_ROWS. The eager call, which runs no split kernel there, still makes the
    split's counters, so the graph splits K as the rule says (two slices at 64 tokens)."""
    monkeypatch.setattr(split_k, "_rings", {})  # a device no split call has run on
    torch.manual_seed(0)
    qweight = dataclasses.replace(
        get_scheme("w4a16").quantize_weight(torch.randn(*QKV_TP2, device="cuda")),
        keep_operand=True)
    for rows in (DENSE_KEPT_GLUON_MAX_ROWS, DENSE_KEPT_GLUON_MAX_ROWS + 1):
        x = torch.randn(rows, QKV_TP2[1], device="cuda").bfloat16()
        eager = w4a16_linear(x, qweight)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            got = w4a16_linear(x, qweight)
        graph.replay()
        torch.cuda.synchronize()
        gluon = rows <= DENSE_KEPT_GLUON_MAX_ROWS
        assert torch.equal(got, w4a16_dense_gluon(x, qweight) if gluon else eager)
    assert gluon_dense_tiles(64, *QKV_TP2, 132)[4] == 2
