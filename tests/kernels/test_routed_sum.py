"""The MoE combine kernel adds each token's expert rows in the reference's order and rounding
(bit for bit), and the reference is Megatron's combine where that one is exact (fp32 rows on
the CPU, whose scatter_add_ adds in row order)."""
import pytest
import torch
from megatron.core.transformer.moe.moe_utils import permute, unpermute

from megatron_qarl.quant.ops import reference_routed_sum
from qarl_kernels.routed_sum import routed_sum


def _routing(tokens, experts, top_k, seed, experts_used=None, fewer=0):
    """A top-k routing map; experts past experts_used get no token, and the first `fewer`
    tokens drop their last choice (fewer routes than top-k)."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(tokens, experts, generator=g)
    logits[:, experts_used or experts:] = float("-inf")
    chosen = logits.topk(top_k, dim=-1).indices
    routing_map = torch.zeros(tokens, experts, dtype=torch.bool).scatter_(1, chosen, True)
    routing_map[:fewer, chosen[:fewer, -1]] = False
    return routing_map


CASES = [(1, 8, 2, None, 0), (7, 16, 4, None, 3), (33, 128, 8, 40, 0), (5, 6, 6, None, 0),
         (9, 12, 3, 3, 2)]


@pytest.mark.parametrize("tokens,experts,top_k,experts_used,fewer", CASES)
def test_reference_is_megatrons_combine_in_fp32(tokens, experts, top_k, experts_used, fewer):
    routing_map = _routing(tokens, experts, top_k, seed=tokens, experts_used=experts_used,
                           fewer=fewer)
    x = torch.randn(tokens, 24, generator=torch.Generator().manual_seed(1))
    rows, _, sorted_indices = permute(x, routing_map, num_out_tokens=int(routing_map.sum()))
    rows = rows * torch.randn(rows.shape[0], 1, generator=torch.Generator().manual_seed(2))
    megatron = unpermute(rows, sorted_indices, restore_shape=x.shape)
    assert torch.equal(reference_routed_sum(rows, routing_map, top_k), megatron)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("tokens,experts,top_k,experts_used,fewer", CASES)
def test_kernel_equals_reference(device, dtype, tokens, experts, top_k, experts_used, fewer):
    routing_map = _routing(tokens, experts, top_k, seed=tokens, experts_used=experts_used,
                           fewer=fewer).to(device)
    hidden = 40 if device.type == "cpu" else 2048 + 40  # a ragged last hidden block
    rows = torch.randn(int(routing_map.sum()), hidden, generator=torch.Generator()
                       .manual_seed(3)).to(device, dtype)
    want = reference_routed_sum(rows, routing_map, top_k)
    block_h = 16 if device.type == "cpu" else 1024
    for count_tokens in (tokens, tokens - 1):  # counted in the kernel, from torch's cumsum
        got = routed_sum(rows, routing_map, top_k, block_h=block_h, count_tokens=count_tokens)
        assert got.dtype == dtype and torch.equal(got, want), count_tokens


def test_kernel_rounds_once_not_per_addition(device):
    """bf16 rows whose sum needs fp32: 1 + 8 * 2**-9 is 1.015625 when rounded once, but stays 1
    when each addition rounds to bf16 (as bf16 atomics do)."""
    routing_map = torch.ones(1, 9, dtype=torch.bool, device=device)
    rows = torch.full((9, 4), 2.0**-9, dtype=torch.bfloat16, device=device)
    rows[0] = 1.0
    got = routed_sum(rows, routing_map, 9, block_h=4)
    assert torch.equal(got, torch.full((1, 4), 1.015625, dtype=torch.bfloat16, device=device))


def test_nothing_is_stored_past_the_last_tokens_hidden(device, guard_outputs):
    """Hidden 40 in blocks of 16: the last block's lanes past 40 are masked off."""
    import qarl_kernels.routed_sum as module
    routing_map = _routing(3, 4, 2, seed=0).to(device)
    rows = torch.randn(int(routing_map.sum()), 40).to(device, torch.bfloat16)
    guarded = guard_outputs(module)
    got = routed_sum(rows, routing_map, 2, block_h=16)
    assert torch.equal(got, reference_routed_sum(rows, routing_map, 2)) and guarded.untouched()


def test_rows_fewer_than_the_maps_entries_are_never_read_past(device):
    """Four rows for a map of six entries: the kernel read the two past rows' end (a view in
    front of other values; a review). Those routes now add nothing."""
    routing_map = torch.tensor([[1, 1, 0], [0, 1, 1], [1, 0, 1]], dtype=torch.bool,
                               device=device)
    room = torch.full((6, 4), 1000.0, device=device)
    room[:4] = torch.arange(16.0, device=device).view(4, 4)
    got = routed_sum(room[:4], routing_map, 2, block_h=4)
    assert got.abs().max() < 1000
    full = routed_sum(torch.cat([room[:4], torch.zeros(2, 4, device=device)]), routing_map, 2,
                      block_h=4)
    assert torch.equal(got, full)  # the missing rows count as zeros
