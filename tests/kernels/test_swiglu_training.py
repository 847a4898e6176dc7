"""The training SwiGLU kernels against torch's composite: the forward bit for bit on the GPU
(within one bf16 ulp under the interpreter, whose exp is numpy's), the backward as torch's
autograd computes it, and only h kept for the backward."""
import pytest
import torch
import torch.nn.functional as F

from megatron_qarl.quant import ops
from megatron_qarl.quant.ops import reference_gated_activation
from qarl_kernels.swiglu import gated_silu, swiglu_backward, swiglu_forward

SHAPES = [(1, 24), (19, 128 + 40), (0, 128), (9, 300)]


def _inputs(rows, ffn, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    h = (3 * torch.randn(rows, 2 * ffn, generator=g)).bfloat16().to(device)
    if rows > 2:
        h[1, :ffn] = 0.0  # silu(0) = 0: the row's output and the grad of up are 0
        h[2, 3] = -30.0  # far on silu's flat side: exp(30) in the denominator
    return h


def _ulps_close(got, want, device):
    if device.type == "cuda":
        assert torch.equal(got, want)
    else:
        torch.testing.assert_close(got.float(), want.float(), rtol=2**-7, atol=1e-6)


@pytest.mark.parametrize("rows,ffn", SHAPES)
def test_forward_equals_torch(rows, ffn, device):
    h = _inputs(rows, ffn, device)
    got = swiglu_forward(h)
    assert got.shape == (rows, ffn) and got.dtype == torch.bfloat16
    _ulps_close(got, reference_gated_activation(h), device)


def test_forward_rounds_once(device):
    """silu(gate) * up in fp32, one rounding (SGLang's silu_and_mul): not torch's bf16 silu
    times up, which rounds twice and differs on a share of the outputs."""
    h = _inputs(64, 256, device)
    gate, up = h.chunk(2, dim=-1)
    once = (F.silu(gate.float()) * up.float()).bfloat16()
    assert torch.equal(reference_gated_activation(h), once)
    assert not torch.equal(once, F.silu(gate) * up)
    _ulps_close(swiglu_forward(h), once, device)


@pytest.mark.parametrize("rows,ffn", SHAPES)
def test_backward_equals_torch_autograd(rows, ffn, device):
    h = _inputs(rows, ffn, device)
    grad = torch.randn(rows, ffn, generator=torch.Generator().manual_seed(1)).bfloat16()
    grad = grad.to(device)
    h_ref = h.clone().requires_grad_()
    reference_gated_activation(h_ref).backward(grad)
    grad_h = swiglu_backward(grad, h)
    assert grad_h.dtype == torch.bfloat16 and grad_h.shape == h.shape
    # one bf16 ulp: silu's grad is one fp32 expression whose contraction into FMAs differs
    torch.testing.assert_close(grad_h.float(), h_ref.grad.float(), rtol=2**-7, atol=1e-6)
    if rows > 2:
        assert torch.all(grad_h[1, ffn:] == 0)


def test_autograd_keeps_h_only(device):
    h = _inputs(64, 96, device).requires_grad_()

    def saved_bytes(fn):
        saved = []
        with torch.autograd.graph.saved_tensors_hooks(
                lambda t: saved.append(t.untyped_storage().nbytes()) or t, lambda t: t):
            fn(h).sum().backward()
        return sum(saved)

    kept = saved_bytes(gated_silu)
    assert kept == h.untyped_storage().nbytes()
    assert saved_bytes(reference_gated_activation) > kept  # torch's keeps [R, F] tensors too


def test_gated_activation_takes_the_registered_op_for_bf16_silu_only(monkeypatch):
    calls = []

    def op(h):
        calls.append(h.dtype)
        return reference_gated_activation(h)

    monkeypatch.setitem(ops._GATED_ACTIVATION, "cpu", op)
    h = _inputs(4, 8, torch.device("cpu"))
    ops.gated_activation(h)
    ops.gated_activation(h.float())  # fp32 learners keep torch's fp32 SwiGLU
    ops.gated_activation(h, activation=F.gelu)
    assert calls == [torch.bfloat16]


def test_bad_input_names_the_tensor(device):
    h = _inputs(4, 8, device)
    with pytest.raises(ValueError, match="grad: shape"):
        swiglu_backward(torch.zeros(4, 9, device=device, dtype=torch.bfloat16), h)
    with pytest.raises(ValueError, match="h: dtype"):
        swiglu_forward(h.float())
