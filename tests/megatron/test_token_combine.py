"""The MoE layers of quantized experts sum each token's rows without atomics, in the
combine and in the permutation's backward (layers/token_combine.py). In fp32 on the CPU that is
Megatron's combine and backward bit for bit (its scatter_add_ and index_add_ then add in the
same order); in bf16 it rounds once, where Megatron's rounds at every addition."""
import torch
from megatron.core.transformer.moe.moe_layer import MoELayer

from megatron_qarl.layers.token_combine import routes_per_token
from megatron_qarl.quant import ops

from tiny_qwen3 import batch, build_tiny, loss_of


def _dispatchers(model):
    return [m.token_dispatcher for m in model.modules() if isinstance(m, MoELayer)]


def _loss_and_grads(model, routes, seed=4):
    for dispatcher in _dispatchers(model):
        dispatcher.routes_per_token = routes
    model.zero_grad(set_to_none=True)
    tokens, positions = batch(seed=seed)
    loss = loss_of(model, tokens, positions)
    loss.backward()
    return loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters()
                           if p.grad is not None}


def test_routed_sums_are_megatrons_in_fp32(single_process, monkeypatch):
    model = build_tiny("w4a16", "experts")
    top_k = model.config.moe_router_topk
    assert [d.routes_per_token for d in _dispatchers(model)] == [top_k] * model.config.num_layers
    calls = []

    def counting(rows, routing_map, routes):
        calls.append(routes)
        return ops.reference_routed_sum(rows, routing_map, routes)

    monkeypatch.setitem(ops._ROUTED_SUM, "cpu", counting)
    ours = _loss_and_grads(model, top_k)
    assert calls == [top_k] * (2 * model.config.num_layers)  # combine, permutation's backward
    megatron = _loss_and_grads(model, None)
    assert torch.equal(ours[0], megatron[0])
    assert ours[1].keys() == megatron[1].keys()
    for name, grad in ours[1].items():
        assert torch.equal(grad, megatron[1][name]), name


def test_bf16_routed_sums_stay_close_to_megatrons(single_process):
    model = build_tiny("w4a16", "experts", params_dtype=torch.bfloat16)
    ours = _loss_and_grads(model, model.config.moe_router_topk)
    megatron = _loss_and_grads(model, None)
    torch.testing.assert_close(ours[0], megatron[0], rtol=2e-3, atol=0)
    for name, grad in ours[1].items():
        torch.testing.assert_close(grad.float(), megatron[1][name].float(), rtol=0.05,
                                   atol=0.05 * megatron[1][name].float().abs().max().item())


def test_megatrons_combine_stays_where_tokens_can_have_more_or_fewer_rows(single_process):
    config = build_tiny("w4a16", "experts").config
    assert routes_per_token(config) == config.moe_router_topk
    for change in ({"moe_expert_capacity_factor": 1.0}, {"moe_permute_fusion": True},
                   {"moe_router_padding_for_quantization": True}):
        for name, value in change.items():
            previous = getattr(config, name)
            setattr(config, name, value)
            try:
                assert routes_per_token(config) is None, name
            finally:
                setattr(config, name, previous)


def test_hooks_install_once_however_often_models_are_built():
    from megatron.core.transformer.moe import token_dispatcher
    from megatron_qarl.layers.token_dispatch import install_dispatcher_hooks

    dispatcher = token_dispatcher.MoEAlltoAllTokenDispatcher
    install_dispatcher_hooks()
    methods = (dispatcher.dispatch_preprocess, dispatcher.combine_postprocess,
               dispatcher._maybe_dtoh_and_synchronize, token_dispatcher.permute)
    install_dispatcher_hooks()
    assert methods == (dispatcher.dispatch_preprocess, dispatcher.combine_postprocess,
                       dispatcher._maybe_dtoh_and_synchronize, token_dispatcher.permute)


def test_overlapped_shared_experts_keep_megatrons_dispatch(single_process):
    """Shared experts overlapped with the dispatcher read its input tokens: that dispatcher
    keeps Megatron's permutation and combine (the routed sums permute a detached copy, which
    would cut the shared experts' gradient to the layers below) and moves bf16 tokens (the
    shared experts cannot read packed rows)."""
    model = build_tiny("w4a16", "experts", moe_shared_expert_intermediate_size=128,
                       moe_shared_expert_overlap=True)
    dispatchers = _dispatchers(model)
    assert dispatchers and all(d.shared_experts is not None for d in dispatchers)
    assert all(getattr(d, "routes_per_token", None) is None for d in dispatchers)
    assert all(getattr(d, "token_scheme", None) is None for d in dispatchers)
    _, grads = _loss_and_grads(model, None)
    shared = [n for n in grads if ".shared_experts." in n]
    assert len(shared) == 2 * model.config.num_layers and all(grads[n].any() for n in grads)
