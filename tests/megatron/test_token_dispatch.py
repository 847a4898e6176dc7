"""Forwards without autograd quantize the tokens before Megatron's dispatcher moves them (FP8,
INT8):
each token is quantized once, not once per routed expert, and the experts get the codes they
would have made from the dispatched bf16 tokens, so the loss is the same, on one rank and
through EP=2 and TP=2 x EP=2 all-to-alls. Training forwards dispatch bf16 tokens. At
EP = TP = 1 the experts also get their token counts on the device."""
import pytest
import torch
from megatron.core.transformer.moe.moe_layer import MoELayer

from megatron_qarl.compat.cpu_testing import run_distributed
from megatron_qarl.quant import ops
from token_dispatch_cases import KERNELS, cpu_key, no_grad_losses, register_kernels_on_cpu
from tiny_qwen3 import batch, build_tiny, loss_of, triton_kernels_on_cpu


@triton_kernels_on_cpu
@pytest.mark.parametrize("scheme", list(KERNELS))
def test_tokens_are_quantized_once_before_dispatch(scheme, single_process, monkeypatch):
    register_kernels_on_cpu(scheme, monkeypatch.setitem)
    _, _, fused_experts, packer = KERNELS[scheme]
    quantized, seen = [], []

    def quantizer(tokens):
        quantized.append(tokens.shape[0])
        return packer(tokens)

    def experts(x, *args, **kwargs):
        seen.append(x.dtype)
        return fused_experts(x, *args, **kwargs)

    monkeypatch.setitem(ops._SWIGLU_EXPERTS, cpu_key(scheme), experts)
    model = build_tiny(scheme, targets="experts", params_dtype=torch.bfloat16)
    assert all(m.token_dispatcher.token_scheme is m.experts.scheme
               for m in model.modules() if isinstance(m, MoELayer))
    layers = model.config.num_layers
    tokens, positions = batch(seed=5)
    with torch.no_grad():  # no pre-dispatch quantizer registered: bf16 tokens
        plain = loss_of(model, tokens, positions)
    assert seen == [torch.bfloat16] * layers
    monkeypatch.setitem(ops._DISPATCH_QUANTIZER, cpu_key(scheme), quantizer)
    trained = loss_of(model, tokens, positions)  # autograd on: bf16 tokens, no quantizer
    assert quantized == []
    seen.clear()
    with torch.no_grad():
        packed = loss_of(model, tokens, positions)
    assert quantized == [tokens.numel()] * layers  # each token once, top-k copies moved
    assert seen == [torch.uint8] * layers
    assert torch.equal(packed, plain)
    torch.testing.assert_close(packed, trained.detach(), rtol=1e-3, atol=0)


@triton_kernels_on_cpu
@pytest.mark.parametrize("scheme", list(KERNELS))
def test_quantized_tokens_cross_the_all_to_all(scheme):
    layouts = ["ep2", "tp2-ep2-etp1"]
    for rank, results in enumerate(run_distributed(no_grad_losses, 2, scheme, layouts)):
        for layout, (after, before, reference) in results.items():
            assert before == after, (rank, layout)
            # bf16 model: TP=2 attention sums in another order (5e-5 relative measured)
            assert abs(before - reference) / reference < 2e-4, (rank, layout)


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


def test_permute_of_a_known_count_equals_megatrons_permute():
    """The sync-free permutation a CUDA graph captures (layers.token_dispatch): same tokens,
    probs and indices in the same order, with one token, with empty experts, and with every
    token on the same experts."""
    from megatron.core.transformer.moe.moe_utils import permute
    from megatron_qarl.layers.token_dispatch import permute_known_count

    g = torch.Generator().manual_seed(0)
    for tokens, experts, top_k, experts_used in [(1, 8, 2, 8), (7, 16, 4, 16), (33, 128, 8, 40),
                                                (5, 16, 4, 4)]:
        logits = torch.randn(tokens, experts, generator=g)
        logits[:, experts_used:] = float("-inf")  # experts past experts_used get no token
        chosen = logits.topk(top_k, dim=-1).indices
        routing_map = torch.zeros(tokens, experts, dtype=torch.bool).scatter_(1, chosen, True)
        probs = torch.rand(tokens, experts, generator=g)
        x = torch.randn(tokens, 6, generator=g)
        want = permute(x, routing_map, probs=probs, num_out_tokens=tokens * top_k)
        got = permute_known_count(x, routing_map, probs, tokens * top_k)
        for w, o in zip(want, got):
            assert torch.equal(w, o)


@triton_kernels_on_cpu
def test_quantized_tokens_restore_their_shape_through_megatrons_combine(single_process,
                                                                         monkeypatch):
    """With a capacity factor a token may keep fewer than top-k rows, so Megatron's combine
    (unpermute) stays: it must restore the bf16 tokens' shape, not the packed rows' that the
    dispatcher moved."""
    scheme = "int8"
    register_kernels_on_cpu(scheme, monkeypatch.setitem)
    model = build_tiny(scheme, targets="experts", params_dtype=torch.bfloat16,
                       moe_expert_capacity_factor=4.0)  # room for every token: none dropped
    dispatchers = [m.token_dispatcher for m in model.modules() if isinstance(m, MoELayer)]
    assert dispatchers and all(d.routes_per_token is None and d.token_scheme is not None
                               for d in dispatchers)
    tokens, positions = batch(seed=5)
    with torch.no_grad():
        plain = loss_of(model, tokens, positions)
    monkeypatch.setitem(ops._DISPATCH_QUANTIZER, cpu_key(scheme), KERNELS[scheme][3])
    with torch.no_grad():
        packed = loss_of(model, tokens, positions)
    assert packed.shape == plain.shape and torch.equal(packed, plain)


def test_a_padded_or_fused_permutation_stays_megatrons(monkeypatch):
    """The known-count permutation is for dropless maps on CUDA only: with drop_and_pad
    (capacity padding) or fusion Megatron's permute runs, whose row count differs."""
    from types import SimpleNamespace

    from megatron_qarl.layers import token_dispatch

    calls = []

    def megatrons(tokens, routing_map, **kwargs):
        calls.append(kwargs)
        return "megatron's"

    monkeypatch.setattr(token_dispatch, "permute_known_count", lambda *args: "known count")
    permute = token_dispatch._sync_free_permute(megatrons)
    cuda_tokens = SimpleNamespace(is_cuda=True)  # all the choice reads of the tokens
    probs = torch.ones(4, 2)
    assert permute(cuda_tokens, None, probs=probs, num_out_tokens=4) == "known count"
    for flags in ({"drop_and_pad": True}, {"fused": True}):
        assert permute(cuda_tokens, None, probs=probs, num_out_tokens=4, **flags) == "megatron's"
    assert permute(cuda_tokens, None, num_out_tokens=4) == "megatron's"  # no probs
    assert [c.get("drop_and_pad") or c.get("fused") for c in calls] == [True, True, False]
