"""build_model(keep_operand=True) (--quant-keep-operand): the W4A16 experts' bf16 operand is
dequantized once per optimizer step for the old-logprob forward and every micro-batch forward
and backward, with the losses and gradients of dequantizing per call, and freed by the
optimizer post-step hook."""
import pytest
import torch

from megatron_qarl.layers import install_quant_refresh_hook, quantized_modules
from megatron_qarl.models import QWEN3_MOE_TINY, build_model
from megatron_qarl.quant import ops
from qarl_kernels import w4a16_gemm
from qarl_kernels.moe_backward import w4a16_grouped_backward

from tiny_qwen3 import batch, loss_of, tiny_config, triton_kernels_on_cpu

MICRO_BATCHES = 3


@pytest.fixture
def dequantize_calls(monkeypatch, operand_dequantize_calls):
    """The CUDA registration of the W4A16 grouped ops, on CPU, with every batch on the
    dequantize + torch._grouped_mm path; returns the dequantize calls made."""
    monkeypatch.setitem(ops._GROUPED, ("W4A16", "cpu"), w4a16_gemm.w4a16_grouped_linear)
    monkeypatch.setitem(ops._GROUPED_BACKWARD, ("W4A16", "cpu"), w4a16_grouped_backward)
    monkeypatch.setattr(w4a16_gemm, "DEQUANT_ROWS_PER_EXPERT", 1)
    monkeypatch.setattr(w4a16_gemm, "KEPT_OPERAND_ROWS_PER_EXPERT", 1)
    return operand_dequantize_calls


def _build(keep_operand):
    """One MoE layer, whose fc1 and fc2 are two caches: every dequantize runs under Triton's
    interpreter on CPU, and a second layer would only double them."""
    return build_model(tiny_config(params_dtype=torch.bfloat16, num_layers=1), "w4a16-g32",
                       targets="experts", keep_operand=keep_operand,
                       **QWEN3_MOE_TINY.model_kwargs())


def _caches(model):
    return [c for _n, m in quantized_modules(model) for c in m.quant_caches().values()]


def _train(model, calls, steps=2):
    """Per step: an old-logprob forward, micro-batch forwards and backwards, an SGD step.
    Returns the losses, the gradients and the dequantize calls of each step."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    install_quant_refresh_hook(opt, model)
    losses, grads, counts = [], [], []
    for step in range(steps):
        calls.clear()
        with torch.no_grad():
            losses.append(loss_of(model, *batch(seed=100 + step)))
        for micro in range(MICRO_BATCHES):
            loss = loss_of(model, *batch(seed=10 * step + micro))
            loss.backward()
            losses.append(loss.detach())
        grads += [p.grad.clone() for p in model.parameters() if p.grad is not None]
        counts.append(len(calls))
        held = [c.get() for c in _caches(model)]
        if held[0].keep_operand:
            assert all(q.operand is not None for q in held)
        opt.step()
        opt.zero_grad()
        assert all(q.operand is None for q in held)  # the hook freed this step's operands
    return losses, grads, counts


@triton_kernels_on_cpu
def test_operand_is_kept_for_the_step_with_the_same_numbers(single_process, dequantize_calls):
    plain, kept = _build(False), _build(True)
    with torch.no_grad():
        for a, b in zip(kept.parameters(), plain.parameters()):
            a.copy_(b)
    layers = len(_caches(kept))  # fc1 and fc2 of the MoE layer
    plain_losses, plain_grads, plain_counts = _train(plain, dequantize_calls)
    kept_losses, kept_grads, kept_counts = _train(kept, dequantize_calls)
    forwards = 1 + MICRO_BATCHES
    assert plain_counts == [(forwards + MICRO_BATCHES) * layers] * 2  # every forward, backward
    assert kept_counts == [layers] * 2  # once per step
    assert all(torch.equal(a, b) for a, b in zip(kept_losses, plain_losses))
    assert all(torch.equal(a, b) for a, b in zip(kept_grads, plain_grads))


@pytest.mark.parametrize("scheme, targets, quantize", [
    ("fp8-block", "experts", True), ("w4a16-g128", "attention", True),
    ("w4a16-g128", "experts", False)])
def test_keep_operand_needs_w4a16_experts(single_process, scheme, targets, quantize):
    with pytest.raises(ValueError, match=rf"keep_operand \(--quant-keep-operand\).*scheme "
                                         rf"{scheme}, targets '{targets}', quantize={quantize}"):
        build_model(tiny_config(), scheme, targets=targets, quantize=quantize,
                    keep_operand=True, **QWEN3_MOE_TINY.model_kwargs())
