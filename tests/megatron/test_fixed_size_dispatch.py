"""The fixed-size token exchange of CUDA-graphed decode steps (layers/fixed_size_dispatch.py)
gives the MoE layers the outputs of Megatron's all-to-all, under EP=2, TP=2 and both, with padding
rows the experts skip; and the engine's lockstep decoding under expert parallelism, where ranks
hold different numbers and lengths of prompts (and batches), gives one rank's tokens either
way."""
import torch
from megatron.core.transformer.moe.moe_layer import MoELayer

from megatron_qarl.compat.cpu_testing import run_distributed
from megatron_qarl.layers.fixed_size_dispatch import exchanges_tokens, fixed_size_exchange
from megatron_qarl.layers.token_dispatch import permute_known_count, permute_to_capacity

from fixed_exchange_cases import PROMPTS, exchange_losses, lockstep_generation
from tiny_qwen3 import build_tiny


def test_padded_permutation_puts_megatrons_rows_first():
    g = torch.Generator().manual_seed(0)
    tokens = torch.randn(6, 4, generator=g)
    routing_map = torch.zeros(6, 3, dtype=torch.bool)
    routing_map[[0, 2, 2, 5, 3], [1, 0, 2, 1, 0]] = True
    probs = torch.rand(6, 3, generator=g)
    want = permute_known_count(tokens, routing_map, probs, 5)
    got, got_probs = permute_to_capacity(tokens, routing_map, probs, 12)
    assert got.shape == (12, 4) and torch.equal(got[:5], want[0])
    assert torch.equal(got_probs[:5], want[1]) and not got_probs[5:].any()


def test_fixed_size_exchange_gives_the_all_to_all_outputs():
    layouts = ["ep2", "tp2", "tp2-ep2-etp1"]  # the last: the 8-GPU layout's pattern
    for rank, results in enumerate(run_distributed(exchange_losses, 2, layouts)):
        for layout, (plain, fixed, again, seen, hints) in results.items():
            assert abs(fixed - plain) <= 1e-5 * abs(plain), (rank, layout)
            assert again == plain, (rank, layout)
            (a2a_rows, a2a_routed, a2a_share), fixed_seen, again_seen = seen
            assert a2a_rows == a2a_routed  # the all-to-all hands over routed rows only
            # after the exchange: the all-to-all's routed rows again, the experts' share restored
            assert again_seen == (a2a_rows, a2a_routed, 1), (rank, layout, again_seen)
            assert a2a_share == 1
            # the gathered tokens of both ranks, padded to every top-k choice being local;
            # under TP alone every expert is local, so every choice is
            fixed_rows, fixed_routed, share = fixed_seen
            padded = fixed_routed < fixed_rows
            assert padded == (layout != "tp2"), (rank, layout, fixed_rows, fixed_routed)
            # the tiny model: top-2 of 4 experts, 2 of them local under EP2: half the capacity;
            # every layer's experts op is told so inside the exchange only
            assert share == (1.0 if layout == "tp2" else 0.5), (rank, layout)
            layers = len(hints) // 3
            assert layers >= 1 and len(hints) == 3 * layers
            hint = None if layout == "tp2" else fixed_rows // 2
            assert hints == [None] * layers + [hint] * layers + [None] * layers, (rank, layout)


def test_lockstep_decoding_under_expert_parallelism():
    for rank, (single, plain, fixed, batched) in enumerate(
            run_distributed(lockstep_generation, 2)):
        assert len(single) == len(PROMPTS[rank]) and all(len(t) == 6 for t in single)
        assert plain == single, rank
        assert fixed == single, rank
        assert batched == single, rank


def test_tokens_that_stay_on_one_rank_keep_their_dispatcher(single_process):
    """At TP = EP = 1 no token crosses ranks: the all-to-all dispatcher (device counts, routed
    rows only) stays inside the exchange too, and the experts' share stays whole."""
    model = build_tiny("w4a16", "experts")
    layers = [m for m in model.modules() if isinstance(m, MoELayer)]
    dispatchers = [m.token_dispatcher for m in layers]
    assert layers and not any(exchanges_tokens(m) for m in layers)
    with fixed_size_exchange(model):
        assert [m.token_dispatcher for m in layers] == dispatchers
        assert all(m.experts.routed_share == 1 for m in layers)
