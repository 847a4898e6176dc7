"""The benchmark's routing (bench.measure.route): uniform as before, skewed as documented."""
import torch

from qarl_kernels.bench.measure import route


def test_uniform_routing_is_the_plain_top_k_of_the_same_draw():
    counts = route(64, 128, 8, seed=3, device="cpu")
    g = torch.Generator(device="cpu").manual_seed(3)
    chosen = torch.rand(64, 128, generator=g).topk(8, dim=1).indices.flatten()
    assert torch.equal(counts, torch.bincount(chosen, minlength=128).to(torch.int32))


def test_each_token_picks_distinct_experts_under_skew():
    counts = route(256, 16, 8, seed=0, skew=0.5, device="cpu")
    assert int(counts.sum()) == 256 * 8 and int(counts.max()) <= 256


def test_skew_loads_the_busiest_expert():
    # about 4x the mean from 256 tokens on at E=128 (docs/kernel_rounds.md, round 13)
    mean = 256 * 8 / 128
    uniform = [int(route(256, 128, 8, seed=s, device="cpu").max()) for s in range(4)]
    skewed = [int(route(256, 128, 8, seed=s, skew=0.5, device="cpu").max()) for s in range(4)]
    assert max(uniform) <= 2 * mean and min(skewed) > 2.5 * mean


def test_a_ranks_share_is_the_first_experts_of_the_global_routing():
    # EP8 beside TP attention: 256 tokens over 128 experts, the rank's 16 see about M / 16 rows
    share = route(256, 128, 8, seed=1, device="cpu", local=16)
    assert torch.equal(share, route(256, 128, 8, seed=1, device="cpu")[:16])
    assert share.shape == (16,) and 8 <= float(share.float().mean()) <= 24
