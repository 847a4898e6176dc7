"""The Gluon W4A16 kernel's tile and launch rules (w4a16_gluon_rules) against the tuners' and
A/Bs' answers, and the limits of where the kernel applies: plain functions, checked on the CPU."""
import pytest
import torch

from megatron_qarl.quant import get_scheme
from qarl_kernels import w4a16_gluon as wg
from qarl_kernels.checks import scale_words_fit
from qarl_kernels.expert_tiles import tile_bound
from qarl_kernels.w4a16_gluon_rules import gluon_early_words, gluon_groups, gluon_launch, \
    gluon_pdl, gluon_refill_first, gluon_release, gluon_stage_acc, gluon_swiglu_tiles, gluon_tail, \
    gluon_tiles, gluon_walk, gluon_x_async

# (shape, M tokens) -> the Gluon tiles of the round-11 and round-12 tuners (EP8 from 64 per
# expert: round 13's A/B under uniform and skewed routing), top-8 routing; the
# weight rows n: W13 1536 (gate and up), W2 2048, W13 at TP2 768
W13, W2, TP2 = (1536, 2048), (2048, 768), (768, 2048)
ROUTES = [
    # up to 4 tokens per expert: 8-token x tiles; one token: 64-row weight tiles. Round 17:
    # stages of 2 or 4 scale groups (gluon_groups) to 24 tokens per expert
    ("W13 EP8", 16, W13, 1, (8, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 8, (16, 64, 2, None, None)),  # round 19: with the release
    ("W13 EP8", 16, W13, 16, (16, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 24, (32, 64, 3, None, None)),
    # round 20: from 13 per expert two stages, which leave room for a tail (gluon_tail)
    ("W13 EP8", 16, W13, 26, (32, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 32, (32, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 48, (32, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 64, (64, 64, 3, None, None)),
    # round 16: from 60 to 72 per expert, 64-token tiles whose last row tile takes up to 16
    # more rows (gluon_tail)
    ("W13 EP8", 16, W13, 120, (64, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 128, (64, 64, 2, None, None)),
    ("W13 EP8", 16, W13, 144, (64, 64, 2, None, None)),
    # round 13: one 128-token tile per expert from 65 per expert, 64-token ones from 120 (the
    # 128-token tiles of all experts then often take more than one wave)
    ("W13 EP8", 16, W13, 152, (128, 128, 2, None, None)),
    ("W13 EP8", 16, W13, 238, (128, 128, 2, None, None)),
    ("W13 EP8", 16, W13, 240, (64, 128, 3, None, None)),
    ("W13 EP8", 16, W13, 256, (64, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 1, (8, 64, 3, None, None)),
    # round 19: the whole K in a ring of three stages of two groups to 16 per expert, then
    # 64-token tiles
    ("W2 EP8", 16, W2, 8, (16, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 16, (16, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 24, (32, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 32, (32, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 48, (64, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 64, (64, 128, 3, None, None)),
    ("W2 EP8", 16, W2, 128, (128, 128, 2, None, None)),  # round 13: 64 to 111 per expert
    ("W2 EP8", 16, W2, 222, (128, 128, 2, None, None)),
    ("W2 EP8", 16, W2, 224, (64, 64, 2, None, None)),
    ("W2 EP8", 16, W2, 256, (64, 128, 2, None, None)),
    # W13 at E128: 8-token tiles, a persistent grid and four groups a stage to 4 tokens per
    # expert (round 17), then caps from 8 to 31 tokens per expert
    ("W13 E128", 128, W13, 1, (8, 64, 2, None, None)),
    ("W13 E128", 128, W13, 8, (8, 64, 2, None, 3)),
    ("W13 E128", 128, W13, 16, (8, 64, 2, None, 3)),
    ("W13 E128", 128, W13, 64, (8, 64, 2, None, 3)),
    # round 18: 16-token tiles with four groups from 5 tokens per expert, 32 x 128 from 12
    ("W13 E128", 128, W13, 80, (16, 64, 2, None, 3)),
    ("W13 E128", 128, W13, 176, (16, 64, 2, None, 3)),
    ("W13 E128", 128, W13, 192, (32, 128, 2, None, None)),
    ("W13 E128", 128, W13, 320, (32, 128, 2, None, None)),
    ("W13 E128", 128, W13, 336, (32, 128, 3, 128, None)),
    ("W13 E128", 128, W13, 1024, (64, 128, 3, None, None)),
    # W2 at E128: persistent grids of 3 CTAs per SM from 4 tokens to 32 per expert
    ("W2 E128", 128, W2, 1, (8, 64, 3, None, None)),
    ("W2 E128", 128, W2, 4, (8, 128, 3, None, 4)),  # round 13: 4 per SM under 8 tokens
    ("W2 E128", 128, W2, 8, (8, 128, 3, None, 3)),
    ("W2 E128", 128, W2, 128, (16, 128, 3, None, 3)),
    ("W2 E128", 128, W2, 256, (32, 128, 3, None, 3)),
    ("W2 E128", 128, W2, 512, (64, 128, 3, None, None)),
    # TP2 (n halved): persistent 8-token tiles (64-row weight tiles, 5 per SM, under 2 tokens
    # per expert), then 64-row weight tiles and no cap
    ("W13 TP2", 128, TP2, 1, (8, 64, 2, None, None)),
    ("W13 TP2", 128, TP2, 8, (8, 64, 3, None, 5)),
    ("W13 TP2", 128, TP2, 16, (8, 64, 2, None, 5)),
    ("W13 TP2", 128, TP2, 32, (8, 128, 3, None, 3)),
    ("W13 TP2", 128, TP2, 64, (8, 64, 2, None, 3)),
    # round 18: 16-token tiles with four groups from 5 tokens per expert, 32 x 128 from 13
    ("W13 TP2", 128, TP2, 80, (16, 64, 2, None, 3)),
    ("W13 TP2", 128, TP2, 192, (16, 64, 2, None, 3)),
    ("W13 TP2", 128, TP2, 208, (32, 128, 2, None, None)),
    ("W13 TP2", 128, TP2, 288, (32, 128, 2, None, None)),
    ("W13 TP2", 128, TP2, 304, (32, 64, 3, None, None)),
    # past 128 tokens per expert: the warp-specialized kernel (w4a16_gemm.WS_ROWS_PER_EXPERT);
    # 512 tokens per expert: dequantize + _grouped_mm
    ("W13 EP8", 16, W13, 258, None), ("W2 EP8", 16, W2, 258, None),
    ("W13 E128", 128, W13, 2064, None), ("W13 EP8", 16, W13, 1024, None),
]


@pytest.mark.parametrize("label,experts,shape,tokens,tiles", ROUTES)
def test_routing_follows_the_tuner(label, experts, shape, tokens, tiles):
    assert gluon_tiles(8 * tokens, experts, *shape) == tiles, label


def test_persistent_grid_where_k_holds_no_stages_of_four_groups():
    """TP2 at 4 tokens per expert takes 3 programs an SM in stages of four groups (round 17);
    where K holds no whole stages of four (K = 2304: 18 groups) the one-group tiles keep the
    persistent grid, as at 2 tokens per expert."""
    assert gluon_tiles(8 * 64, 128, 768, 2304)[4] == gluon_tiles(8 * 32, 128, 768, 2304)[4] == 3
    assert gluon_groups(8 * 64, 128, 768, 2304) == 1


def test_x_async_rule():
    # one token per call, and EP8's fused fc1 up to 8 tokens per expert (round 14)
    assert all(gluon_x_async(8, e, n, k) for e, (n, k) in [(128, W13), (16, W13), (128, W2),
                                                            (16, W2), (128, TP2)])
    assert gluon_x_async(64, 16, *W13, swiglu=True) and gluon_x_async(128, 16, *W13, swiglu=True)
    assert not gluon_x_async(64, 16, *W13) and not gluon_x_async(256, 16, *W13, swiglu=True)
    assert not gluon_x_async(64, 128, *TP2, swiglu=True) and not gluon_x_async(64, 128, *W2)
    # up to three tokens (24 rows of top-8), not from four
    assert gluon_x_async(24, 128, *W13) and not gluon_x_async(32, 128, *W13)


def test_tail_rule():
    # W13 at EP8 only: the GEMM from 60 to 72 rows per expert, the fused fc1 + SwiGLU to 64
    # (round 16); the GEMM from 13 to 24 (round 20)
    assert [gluon_tail(8 * m, 16, *W13) for m in (112, 120, 128, 144, 152)] == [0, 16, 16, 16, 0]
    assert [gluon_tail(8 * m, 16, *W13) for m in (24, 26, 32, 48, 50, 64)] == [
        0, 16, 16, 16, 0, 0]
    assert [gluon_tail(m, 16, *W13) for m in (192, 208, 256, 384, 400)] == [0, 16, 16, 16, 0]
    assert not gluon_tail(8 * 32, 16, *W13, swiglu=True)
    assert [gluon_tail(8 * m, 16, *W13, swiglu=True) for m in (112, 120, 128, 136)] == [
        0, 16, 16, 0]
    assert not any(gluon_tail(8 * 128, e, *shape) for e, shape in [(16, W2), (128, W13),
                                                                    (128, TP2)])


def test_groups_rule():
    # round 17: one to three tokens everywhere (four groups where K holds them); W13 at E128
    # to 4 tokens per expert, at EP8 to 24 (fused likewise); TP2 at 1 and 3-4 per expert (the
    # fused fc1 at 4, in a persistent grid). Round 18: E128 5-20 and TP2 5-18 per expert
    assert [gluon_groups(8, e, n, k) for e, (n, k) in [(128, W13), (16, W13), (128, W2),
                                                       (16, W2), (128, TP2)]] == [4, 4, 2, 2, 4]
    assert [gluon_groups(8 * m, 16, *W13) for m in (8, 16, 32, 48, 64)] == [4, 4, 2, 2, 1]
    assert [gluon_groups(8 * m, 16, *W13, swiglu=True) for m in (8, 16, 48, 64)] == [4, 2, 2, 1]
    assert [gluon_groups(8 * m, 128, *W13) for m in (8, 64, 128, 192, 256, 336)] == [
        4, 4, 4, 2, 2, 1]
    assert [gluon_groups(8 * m, 128, *TP2) for m in (8, 16, 32, 64, 128, 256)] == [
        1, 4, 1, 4, 4, 2]
    assert gluon_groups(64, 128, *W13, swiglu=True) == 1
    assert [gluon_groups(8 * m, 128, *TP2, swiglu=True) for m in (16, 32, 64, 128, 192)] == [
        1, 1, 2, 4, 1]
    # round 18: the fused fc1 at E128 and TP2 from 5 tokens per expert, 2 programs an SM
    assert gluon_swiglu_tiles(8 * 192, 128, *W13) == (16, 64, 2, None, 2)
    assert gluon_swiglu_tiles(8 * 224, 128, *W13) == (16, 64, 3, 128, None)
    # groups only where K holds whole stages of them
    assert gluon_groups(8 * 128, 128, 768, 2176) == 1 and gluon_groups(8, 128, 768, 896) == 1
    assert all(gluon_groups(8 * m, 128, *W2) == 1 for m in (8, 64, 256))
    # round 19: W2 at EP8 to 16 tokens per expert
    assert [gluon_groups(8 * m, 16, *W2) for m in (8, 32, 48, 256)] == [2, 2, 1, 1]


def test_pdl_rule():
    # decode batches (up to 256 tokens of top-8) launch with PDL; at 1024 tokens W13 E128 lost
    assert gluon_pdl(8) and gluon_pdl(2048) and not gluon_pdl(8192)


def test_refill_first_rule():
    # round 20: stages of several groups in grids of one tile a program with 64-row weight
    # tiles (with 128-row ones W2 at EP8 lost, and W13 at E128 and TP2 at M=256 under uniform
    # routing)
    def rule(tokens, experts, shape):
        s = (8 * tokens, experts) + shape
        return gluon_launch(s, gluon_tiles(*s))["refill_first"]
    assert [rule(m, 16, W13) for m in (1, 8, 16, 32, 48, 64)] == [True] * 5 + [False]
    assert [rule(m, 16, W2) for m in (1, 8, 16, 64)] == [True, False, False, False]
    assert [rule(m, 128, W13) for m in (1, 8, 128, 256)] == [True, False, False, False]
    assert [rule(m, 128, W2) for m in (1, 8)] == [True, False]
    assert [rule(m, 128, TP2) for m in (1, 8, 64, 256)] == [True, False, False, False]
    assert gluon_refill_first((16, 64, 2, None, None), 4)
    assert not gluon_refill_first((16, 128, 3, None, None), 2)
    assert not gluon_refill_first((8, 64, 2, None, 3), 4)
    assert not gluon_refill_first((64, 64, 3, None, None), 1)


def test_stage_acc_rule():
    # round 62: fc2's prob epilogue stages the accumulator on 64 x 128 tiles of 2 stages where
    # each expert fills two row tiles (W2 at EP8, 128 rows an expert: 25.1 -> 20.6 us); nowhere
    # else the rules launch (96 and 112 rows an expert, E128's tiles of 3 stages)
    def rule(tokens, experts, shape):
        s = (8 * tokens, experts) + shape
        tiles = gluon_tiles(*s)
        return tiles and gluon_launch(s, tiles)["stage_acc"]
    assert rule(256, 16, W2)
    assert not any(rule(m, 16, W2) for m in (8, 64, 128, 192, 224))
    assert not any(rule(m, 128, W2) for m in (8, 256, 1024, 2048))
    assert gluon_stage_acc((2304, 16) + W2, (64, 128, 2, None, None))
    assert not gluon_stage_acc((2048, 16) + W2, (64, 128, 3, None, None))


def test_split_rule():
    # round 35: the fused fc1 four ways while the grid's bound is at most 96 programs (M = 1
    # at E128, EP8 and TP2 with its halved columns, the decode batch at M = 8 and TP2 at M = 2),
    # two ways up to 192 at E >= 64 (E128 at M = 2, TP2 at M = 3-4); none past 32 rows; the
    # GEMM never; split calls take stages of two groups
    def rule(rows, experts, shape, swiglu):
        s = (rows, experts) + shape
        launch = gluon_launch(s, (gluon_swiglu_tiles if swiglu else gluon_tiles)(*s), swiglu)
        assert launch["split_k"] == 1 or (launch["groups"] == 2 and not launch["early_words"])
        return launch["split_k"]
    assert [rule(r, e, sh, True) for r, e, sh in [(8, 128, W13), (8, 16, W13), (8, 128, TP2),
                                                  (16, 128, TP2), (16, 128, W13), (16, 16, W13),
                                                  (24, 128, TP2), (32, 128, TP2), (24, 128, W13),
                                                  (24, 16, W13), (48, 128, TP2), (64, 16, W13)]] == [
        4, 4, 4, 4, 2, 1, 2, 2, 1, 1, 1, 1]
    assert [rule(r, e, sh, False) for r, e, sh in [(8, 16, W13), (4, 16, W13), (16, 16, W13),
                                                   (8, 128, W13), (8, 128, TP2), (8, 16, W2),
                                                   (8, 128, W2)]] == [1] * 7
    assert gluon_launch((8, 16) + W13, gluon_tiles(8, 16, *W13))["groups"] == 4
    # 8 experts (EP16) at 4 tokens: 96 programs split four ways in a grid released early,
    # which asks no early words (a slice's first stages are not the tile's)
    assert rule(32, 8, W13, True) == 4


def test_ep2_swiglu_rule():
    """EP2's 64 experts: the fused fc1 takes TP2's 96-register tiles at 2-4 rows an expert
    (1.06-1.11x, session 28) and the E128 rules' tiles elsewhere."""
    def tiles(tokens):
        return gluon_swiglu_tiles(8 * tokens, 64, *W13)
    assert [tiles(m) for m in (16, 24, 32)] == [(8, 64, 2, 96, None)] * 3
    assert tiles(8) == (8, 64, 3, None, None)
    assert tiles(64) == (16, 64, 2, None, 2)  # the persistent tiles of 5-12 rows an expert


def test_walk_rule():
    """x padded past the expected rows (a fixed-size exchange): W2 at EP8 walks a grid capped at
    the bound of twice those rows, with early words and refills first off; W13, and x with no
    padding, keep one tile a program (session 28)."""
    for tokens in (64, 256, 1024):  # gathered tokens of EP8: 8 x 8-128 a rank
        s = (tokens, 16) + W2
        tiles = gluon_tiles(*s)
        want = 2048 // tiles[1] * tile_bound(2 * tokens, 16, tiles[0])
        launch = gluon_launch(s, tiles, x_rows=8 * tokens)
        assert gluon_walk(s, tiles, 8 * tokens) == launch["max_programs"] == want
        assert not launch["early_words"] and not launch["refill_first"]
        assert gluon_walk(s, tiles, tokens) is None  # no padding
        w13 = (tokens, 16) + W13
        assert gluon_walk(w13, gluon_tiles(*w13), 8 * tokens) is None
        assert gluon_walk(w13, gluon_swiglu_tiles(*w13), 8 * tokens, swiglu=True) is None
    assert gluon_launch((64, 16) + W2, gluon_tiles(64, 16, *W2))["max_programs"] is None


def test_release_rule():
    # round 19: EP8 grids of a tile a program, from 32 rows to 64 per expert; not the other
    # persistent grids, not E128
    assert [gluon_release(8 * m, 16) for m in (2, 4, 8, 64, 128, 136)] == [
        False, True, True, True, True, False]
    assert not gluon_release(64, 16, 3) and not gluon_release(1024, 128)
    assert all(gluon_release(8 * m, 16, gluon_tiles(8 * m, 16, *shape)[4])
               for m in (8, 16, 32, 64) for shape in (W13, W2))
    # round 22: TP2's grid of 5 programs an SM, from 32 rows (M=4 to 31); not from M=32
    assert [gluon_release(8 * m, 128, gluon_tiles(8 * m, 128, *TP2)[4])
            for m in (2, 4, 8, 16, 31, 32, 64)] == [False, True, True, True, True, False, False]
    assert not any(gluon_release(8 * m, 128, gluon_tiles(8 * m, 128, *W13)[4])
                   for m in (4, 8, 16, 64))
    # early words only where a program takes one tile
    assert not gluon_early_words(64, 128, TP2[1], gluon_tiles(64, 128, *TP2))
    # early words: W13 where released, with tiles (and tails) of twice an expert's mean rows
    assert [gluon_early_words(8 * m, 16, W13[1], gluon_tiles(8 * m, 16, *W13),
                              gluon_tail(8 * m, 16, *W13))
            for m in (2, 8, 16, 48, 56, 120, 128)] == [False, True, True, True, True, False, False]
    assert not gluon_early_words(384, 16, W13[1], gluon_tiles(384, 16, *W13))  # no tail
    assert [gluon_early_words(8 * m, 16, W13[1], gluon_swiglu_tiles(8 * m, 16, *W13))
            for m in (8, 16, 32, 64)] == [True, False, True, False]
    assert not gluon_early_words(64, 16, W2[1], gluon_tiles(64, 16, *W2))


def test_routing_limits():
    # the fused SwiGLU epilogue: 64 gate and 64 up rows. W13 at EP8: its own tiles (smaller
    # token tiles than the GEMM's up to 80 per expert); elsewhere the GEMM's token tile, stages
    # (at least three; two for 128-token tiles) and register cap
    assert [gluon_swiglu_tiles(8 * m, 16, *W13)[:4]
            for m in (8, 16, 32, 128, 136, 160, 224, 256)
            ] == [(8, 64, 2, None), (8, 64, 3, None), (32, 64, 3, None), (32, 64, 3, 160),
                  (32, 64, 3, 128), (128, 64, 2, None), (64, 64, 3, None), (64, 64, 3, None)]
    assert gluon_swiglu_tiles(64, 128, *W13) == (16, 64, 3, 96, None)  # E128 M=8
    assert gluon_swiglu_tiles(2048, 128, *W13) == (32, 64, 3, 128, None)  # E128 M=256
    assert gluon_swiglu_tiles(64, 128, *TP2) == (8, 64, 3, None, None)  # TP2 M=8
    assert gluon_swiglu_tiles(256, 128, *TP2) == (8, 64, 2, 96, None)  # TP2 M=32
    # round 17: TP2 M=64 in a persistent grid, two groups a stage
    assert gluon_swiglu_tiles(512, 128, *TP2) == (8, 64, 3, None, 3)
    # eager calls pay more host time for it: only where the kernel saves more
    assert gluon_tiles(512, 16, 1536, 2048, capturing=False) is None
    assert gluon_tiles(8192, 128, 1536, 2048, capturing=False) == (64, 128, 3, None, None)
    # from 64 experts (EP2) and 64 tokens per expert (round 8)
    assert gluon_tiles(64 * 64, 64, *W13, capturing=False) == gluon_tiles(64 * 64, 64, *W13)
    assert gluon_tiles(64 * 63, 64, *W13, capturing=False) is None
    qweight = get_scheme("w4a16").quantize_weight(torch.randn(2, 64, 256))
    assert not wg.applies(torch.empty(64, 256, dtype=torch.bfloat16), qweight)  # CPU
    qweight64 = get_scheme("w4a16-g64").quantize_weight(torch.randn(2, 64, 256))
    assert not wg.applies(torch.empty(64, 256, dtype=torch.bfloat16), qweight64)
    # the ring carries scales as 4-byte words of group pairs: an odd group count cannot
    odd = get_scheme("w4a16").quantize_weight(torch.randn(2, 64, 384))
    assert scale_words_fit(qweight.scale) and not scale_words_fit(odd.scale)


def test_scale_words_need_whole_aligned_pairs():
    """scale_words_fit: the kernels read a row's bf16 scales as int32 words of group pairs, so
    an odd group count, an odd row stride or a base off 4 bytes would pair a row's last group
    with the next row's first, or misalign every word."""
    scale = torch.zeros(64, 4, dtype=torch.bfloat16)
    assert scale_words_fit(scale)
    assert not scale_words_fit(scale[:, :3])  # 3 groups of rows 4 apart
    assert not scale_words_fit(torch.zeros(64, 5, dtype=torch.bfloat16)[:, :4])  # stride 5
    assert not scale_words_fit(torch.zeros(257, dtype=torch.bfloat16)[1:].view(64, 4))
