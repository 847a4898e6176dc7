"""The routes a batch replays: the engine's experts at each forwarded token, checked against
the sample they came with; rows no engine routed spread over every expert."""
import pytest
import torch

from megatron_qarl.rollout.base import Sample
from megatron_qarl.rollout.routing_replay import UNROUTED, routing_table, spread_unrouted

LAYERS, TOP_K, EXPERTS = 2, 2, 8


def _sample(prompt, response, routes=None):
    forwarded = prompt + response - 1
    if routes is None:
        routes = torch.arange(forwarded * LAYERS * TOP_K).view(forwarded, LAYERS, TOP_K) % EXPERTS
    return Sample(list(range(prompt)), list(range(response)), [0.0] * response, "stop",
                  routed_experts=routes.to(torch.int16))


def test_routes_fill_each_sample_s_forwarded_tokens_and_nothing_else():
    samples = [_sample(3, 2), _sample(2, 4)]
    table = routing_table(samples, seq_len=6, num_experts=EXPERTS)
    assert table.shape == (2, 6, LAYERS, TOP_K)
    for b, s in enumerate(samples):
        n = s.routed_experts.shape[0]
        assert torch.equal(table[b, :n], s.routed_experts.long())
        assert (table[b, n:] == UNROUTED).all()


@pytest.mark.parametrize("routes,match", [
    (torch.zeros(3, LAYERS, TOP_K), r"has routed experts of shape \(3, 2, 2\); its prompt and "
                                    r"response forwarded 4"),
    (torch.zeros(5, LAYERS, TOP_K), r"has routed experts of shape \(5, 2, 2\); its prompt and "
                                    r"response forwarded 4"),
    (torch.full((4, LAYERS, TOP_K), EXPERTS), r"routes to experts 8..8; the model has 8"),
    (torch.full((4, LAYERS, TOP_K), -2), r"routes to experts -2..-2"),
])
def test_routes_of_another_sample_or_other_expert_ids_are_refused(routes, match):
    """Too few routes replayed filler experts for real response tokens; ids past the model's
    experts (SGLang's physical ids under EPLB) failed late inside the router's gather."""
    with pytest.raises(ValueError, match="--rollout-routing-replay: sample 1 " + match):
        routing_table([_sample(3, 2), _sample(3, 2, routes)], seq_len=6, num_experts=EXPERTS)


def test_a_sample_longer_than_the_rows_is_refused_by_one_token_too():
    """5 tokens (4 routes) fill a row of 5; in a row of 4 its routes would fit but its last
    token would not (the check counted routes, so it let one token too many through)."""
    assert routing_table([_sample(3, 2)], seq_len=5, num_experts=EXPERTS).shape[1] == 5
    with pytest.raises(ValueError, match="sample 0 has 5 tokens, more than the learner's "
                                         "sequence length 4"):
        routing_table([_sample(3, 2)], seq_len=4, num_experts=EXPERTS)


def test_unrouted_rows_get_distinct_experts_spread_over_all_and_routed_rows_keep_theirs():
    rows = 64
    indices = torch.full((rows, TOP_K), UNROUTED)
    indices[5] = torch.tensor([7, 3])
    got = spread_unrouted(indices, EXPERTS)
    assert torch.equal(got[5], torch.tensor([7, 3]))
    unrouted = torch.cat([got[:5], got[6:]])
    assert all(len(set(row.tolist())) == TOP_K for row in unrouted)  # a router's top-k
    load = torch.bincount(unrouted.flatten(), minlength=EXPERTS)
    assert load.max() - load.min() <= 2  # not every padding row on experts 0..k-1 (EP rank 0)
