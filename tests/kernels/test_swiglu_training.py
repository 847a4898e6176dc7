"""The training SwiGLU kernels against torch's composite: the forward bit for bit on the GPU
(within one bf16 ulp under the interpreter, whose exp is numpy's), the backward as torch's
autograd computes it, and only h and the probs kept for the backward."""
import pytest
import torch
import torch.nn.functional as F

from megatron_qarl.quant import ops
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels.swiglu import gated_silu, swiglu_backward, swiglu_forward

SHAPES = [(1, 24), (19, 128 + 40), (0, 128)]


def _inputs(rows, ffn, probs_dtype, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = (3 * torch.randn(rows, 2 * ffn, generator=g)).bfloat16().to(device)
    if rows > 2:
        h[1, :ffn] = 0.0  # silu(0) = 0: the row's output, grad_prob and grad of up are 0
        h[2, 3] = -30.0  # far on silu's flat side: exp(30) in the denominator
    probs = torch.rand(rows, generator=g).to(device, probs_dtype)
    return h, probs


def _ulps_close(got, want, device):
    if device.type == "cuda":
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got.float(), want.float(), rtol=2**-7, atol=1e-6)


@pytest.mark.parametrize("rows,ffn", SHAPES)
@pytest.mark.parametrize("probs_dtype", [torch.float32, torch.bfloat16])
def test_forward_equals_torch(rows, ffn, probs_dtype, device):
    h, probs = _inputs(rows, ffn, probs_dtype, device)
    got = swiglu_forward(h, probs)
    assert got.shape == (rows, ffn) and got.dtype == torch.bfloat16
    _ulps_close(got, reference_gated_activation(h, probs), device)


@pytest.mark.parametrize("rows,ffn", SHAPES)
@pytest.mark.parametrize("probs_dtype", [torch.float32, torch.bfloat16])
def test_backward_equals_torch_autograd(rows, ffn, probs_dtype, device):
    h, probs = _inputs(rows, ffn, probs_dtype, device)
    grad = torch.randn(rows, ffn, generator=torch.Generator().manual_seed(1)).bfloat16()
    grad = grad.to(device)
    h_ref, p_ref = h.clone().requires_grad_(), probs.clone().requires_grad_()
    reference_gated_activation(h_ref, p_ref).backward(grad)
    grad_h, grad_p = swiglu_backward(grad, h, probs)
    assert grad_h.dtype == torch.bfloat16 and grad_p.dtype == probs_dtype
    # one bf16 ulp: silu's grad is one fp32 expression whose contraction into FMAs differs
    torch.testing.assert_close(grad_h.float(), h_ref.grad.float(), rtol=2**-7, atol=1e-6)
    rtol = 2**-7 if probs_dtype == torch.bfloat16 else 1e-5  # torch rounds bf16 products
    torch.testing.assert_close(grad_p.float(), p_ref.grad.float(), rtol=rtol, atol=1e-5)
    if rows > 2:
        assert grad_p[1] == 0 and torch.all(grad_h[1, ffn:] == 0)


def test_autograd_keeps_h_and_probs_only(device):
    h, probs = _inputs(64, 96, torch.float32, device)
    h.requires_grad_(), probs.requires_grad_()

    def saved_bytes(fn):
        saved = []
        with torch.autograd.graph.saved_tensors_hooks(
                lambda t: saved.append(t.untyped_storage().nbytes()) or t, lambda t: t):
            fn(h, probs).sum().backward()
        return sum(saved)

    kept = saved_bytes(gated_silu)
    assert kept == h.untyped_storage().nbytes() + probs.untyped_storage().nbytes()
    assert saved_bytes(reference_gated_activation) > kept  # torch's keeps [R, F] tensors too
    h.grad = probs.grad = None
    gated_silu(h, probs.detach()).sum().backward()
    assert h.grad is not None  # probs without grad: none computed for them


def test_gated_activation_takes_the_registered_op_for_bf16_silu_only(monkeypatch):
    calls = []

    def op(h, probs):
        calls.append(h.dtype)
        return reference_gated_activation(h, probs)

    monkeypatch.setitem(ops._GATED_ACTIVATION, "cpu", op)
    h, probs = _inputs(4, 8, torch.float32, torch.device("cpu"))
    ops.gated_activation(h, probs)
    ops.gated_activation(h.float(), probs)  # fp32 learners keep torch's fp32 SwiGLU
    ops.gated_activation(h, probs, activation=F.gelu)
    assert calls == [torch.bfloat16]


def test_bad_input_names_the_tensor(device):
    h, probs = _inputs(4, 8, torch.float32, device)
    with pytest.raises(ValueError, match="grad: shape"):
        swiglu_backward(torch.zeros(4, 9, device=device, dtype=torch.bfloat16), h, probs)
    with pytest.raises(ValueError, match="probs: shape"):
        swiglu_forward(h, probs[:3])
