"""The megatron-core 0.16.1 patches of megatron_qarl.compat behave like the code they patch."""
import torch
from megatron.core.transformer.moe import moe_utils, token_dispatcher

from megatron_qarl.compat import megatron_fixes


def test_identity_chunk_sort_is_skipped_and_other_sorts_are_unchanged():
    megatron_fixes.apply_megatron_fixes()
    megatron_fixes.apply_megatron_fixes()  # idempotent: wrapped once
    sort = token_dispatcher.sort_chunks_by_idxs
    assert sort.skips_identity and sort is not moe_utils.sort_chunks_by_idxs
    x, probs = torch.randn(10, 4), torch.rand(10)
    sizes = torch.tensor([3, 0, 5, 2])
    identity = torch.arange(4)
    out, out_probs = sort(x, sizes, identity, probs=probs)
    assert out is x and out_probs is probs  # TP x EP = 1: no split, no copy
    for order in (torch.tensor([2, 0, 3, 1]), torch.tensor([0, 3, 2, 1])):
        got, got_probs = sort(x, sizes, order, probs=probs)
        want, want_probs = moe_utils.sort_chunks_by_idxs(x, sizes, order, probs=probs)
        assert torch.equal(got, want) and torch.equal(got_probs, want_probs)
        assert not torch.equal(got, x)

