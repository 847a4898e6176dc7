"""bf16 experts as grouped GEMMs (build_model(..., grouped_experts=True), --moe-grouped-gemm):
the same model as Megatron's SequentialMLP (state dict, logits, gradients), with the counts
kept on the device so that decode steps can be graphed."""
import torch
from megatron.core.transformer.moe.experts import SequentialMLP

from megatron_qarl.layers import QuantizedGroupedExperts, install_quant_refresh_hook
from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.quant import NoQuant
from megatron_qarl.rollout.embedded.decode_graph import graph_blocker

from tiny_qwen3 import batch, build_tiny, loss_of, tiny_config

BF16 = dict(params_dtype=torch.bfloat16)


def _grouped(scheme="none", targets="experts"):
    return build_model(tiny_config(**BF16), scheme, targets=targets, grouped_experts=True,
                       **QWEN3_MOE_TINY.model_kwargs())


def _experts(model):
    return [m for m in model.modules() if isinstance(m, SequentialMLP)]


def test_grouped_bf16_experts_are_megatrons_model(single_process):
    torch.manual_seed(0)
    plain = build_tiny("none", **BF16)
    grouped = _grouped()
    assert all(type(e) is SequentialMLP for e in _experts(plain))
    experts = _experts(grouped)
    assert experts and all(isinstance(e, QuantizedGroupedExperts)
                           and isinstance(e.scheme, NoQuant) for e in experts)
    assert plain.state_dict().keys() == grouped.state_dict().keys()
    grouped.load_state_dict(plain.state_dict())

    tokens, positions = batch()
    with torch.no_grad():
        want = plain(tokens, positions, None).float()
        got = grouped(tokens, positions, None).float()
    assert want.abs().max() > 0
    # the same bf16 products (equal on the CPU); elsewhere the summation order may differ
    assert (got - want).abs().max() <= 1e-2 * want.abs().max()

    loss_of(plain, tokens, positions).backward()
    loss_of(grouped, tokens, positions).backward()
    named = dict(plain.named_parameters())
    checked = 0
    for name, param in grouped.named_parameters():
        if "local_experts" in name:
            want_grad, got_grad = named[name].grad.float(), param.grad.float()
            assert got_grad.abs().max() > 0, name
            # the router prob scales fc2's output here (SGLang's order), fc2's input in
            # Megatron's: the bf16 roundings move, 6.6e-3 on the CPU (2.6e-5 in one order)
            assert (got_grad - want_grad).norm() <= 2e-2 * want_grad.norm(), name
            checked += 1
    assert checked == len(experts) * 2 * len(experts[0].local_experts)


def test_the_bf16_copy_follows_an_optimizer_step(single_process):
    torch.manual_seed(0)
    model = _grouped()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    install_quant_refresh_hook(optimizer, model)
    experts = _experts(model)[0]
    before = experts.fc1_cache.get().data.clone()
    loss_of(model, *batch()).backward()
    optimizer.step()
    masters = torch.stack([e.linear_fc1.weight.detach() for e in experts.local_experts])
    assert not torch.equal(masters, before)
    assert torch.equal(experts.fc1_cache.get().data, masters)


def test_grouped_bf16_experts_can_be_graphed(single_process):
    """graph_blocker reads the model only: 'cuda' asks whether a CUDA engine could capture."""
    assert graph_blocker(build_tiny("none", **BF16), "cuda").startswith("the MoE experts")
    assert graph_blocker(_grouped(), "cuda") is None


def test_experts_the_targets_leave_bf16_are_grouped_too(single_process):
    model = _grouped("w4a16-g32", targets="attention")
    assert all(isinstance(e.scheme, NoQuant) for e in _experts(model))


def test_publishing_sends_the_masters_not_the_bf16_copy(single_process):
    """fp32 masters: the grouped forward computes in bf16, but the weights a separate rollout
    copy or a checkpoint export gets are the masters themselves."""
    from megatron_qarl.layers import iter_quantized_weights
    from megatron_qarl.rollout.publish.params import model_params

    model = build_model(tiny_config(), "none", grouped_experts=True,
                        **QWEN3_MOE_TINY.model_kwargs())
    params = dict(model.named_parameters())
    published = {p.name: p.value for p in model_params(model)}
    experts = [n for n in published if "local_experts" in n]
    assert experts and all(published[n].dtype == torch.float32 for n in experts)
    assert all(torch.equal(published[n], params[n]) for n in experts)
    assert not list(iter_quantized_weights(model))
