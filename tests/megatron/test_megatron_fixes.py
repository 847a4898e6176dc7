"""The megatron-core 0.16.1 patches of megatron_qarl.compat behave like the code they patch."""
import torch
from megatron.core.transformer.moe import moe_utils, token_dispatcher
from megatron.core.transformer.moe.moe_layer import MoELayer
from tiny_qwen3 import batch, build_tiny, loss_of

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


def test_quantized_experts_get_device_counts_and_plain_experts_keep_host_ones(single_process):
    """At EP = TP = 1 the dispatcher of QuantizedGroupedExperts skips the host copy and wait
    of its token counts (our experts read them on the device); SequentialMLP's keeps both."""
    quantized, plain = build_tiny("w4a16", "experts"), build_tiny("none")
    dispatchers = [m.token_dispatcher for m in quantized.modules() if isinstance(m, MoELayer)]
    assert dispatchers and all(d.counts_stay_on_device for d in dispatchers)
    assert not any(getattr(m.token_dispatcher, "counts_stay_on_device", False)
                   for m in plain.modules() if isinstance(m, MoELayer))
    counts = torch.tensor([3, 1])
    assert dispatchers[0]._maybe_dtoh_and_synchronize("before_finish", counts) is counts
    tokens, positions = batch()
    loss_of(quantized, tokens, positions).backward()  # the forward and backward still run
    assert all(p.grad is not None for p in quantized.parameters() if p.requires_grad)
