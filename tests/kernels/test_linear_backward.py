"""The dense STE backward on bf16 tensor cores (qarl_kernels.linear_backward) against the
pure-torch reference's fp32 products, and the reference's dispatch to it."""
import contextlib

import pytest
import torch

from megatron_qarl.quant import aligned_linear, get_scheme, ops
from qarl_kernels.linear_backward import aligned_linear_backward


@contextlib.contextmanager
def _registered(scheme, device, op=None):
    """The scheme's linear-backward op on the device is `op` (None: the reference) inside."""
    key = (type(scheme).__name__, device.type)
    previous = ops._LINEAR_BACKWARD.pop(key, None)
    if op is not None:
        ops.register_linear_backward(type(scheme), device.type, op)
    try:
        yield
    finally:
        ops._LINEAR_BACKWARD.pop(key, None)
        if previous is not None:
            ops._LINEAR_BACKWARD[key] = previous


def _grads(scheme, master, x, grad_out):
    """The STE's grads through aligned_linear, with whatever op is registered."""
    master = master.detach().clone().requires_grad_()
    x = x.detach().clone().requires_grad_()
    qweight = scheme.quantize_weight(master.detach())
    aligned_linear(x, master, qweight).backward(grad_out)
    return x.grad, master.grad, qweight


@pytest.mark.parametrize("scheme_name", ["w4a16-g32", "fp8-block", "int8"])
def test_grads_match_the_ste_reference(scheme_name, device, assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme(scheme_name)
    master = torch.randn(136, 256, device=device)  # a ragged FP8 block of rows
    x = torch.randn(3, 5, 256, device=device).bfloat16()  # [seq, batch, in], as Megatron's
    grad_out = torch.randn(3, 5, 136, device=device).bfloat16()
    with _registered(scheme, device):
        want_x, want_w, qweight = _grads(scheme, master, x, grad_out)
    grad_x, grad_w = aligned_linear_backward(grad_out, x, qweight)
    assert grad_x.shape == x.shape and grad_w.shape == master.shape
    assert grad_x.dtype == grad_w.dtype == torch.bfloat16
    if scheme_name == "w4a16-g32":  # its operand is bf16: summation order only
        assert_gemm_close(grad_x, want_x)
    else:  # FP8's and INT8's operand rounded to bf16 (<= 2^-9 relative per weight)
        err = (grad_x.float() - want_x.float()).norm() / want_x.float().norm()
        assert err < 2**-7, err  # a wrong scale or block would give O(1)
    assert_gemm_close(grad_w, want_w)


def test_ste_backward_runs_the_registered_op(device, assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    master = torch.randn(48, 128, device=device)
    x = torch.randn(2, 7, 128, device=device).bfloat16()
    grad_out = torch.randn(2, 7, 48, device=device).bfloat16()
    calls = []

    def counting_backward(*args):
        calls.append(1)
        return aligned_linear_backward(*args)

    with _registered(scheme, device):
        want_x, want_w, _ = _grads(scheme, master, x, grad_out)
    with _registered(scheme, device, counting_backward):
        got_x, got_w, _ = _grads(scheme, master, x, grad_out)
    assert calls == [1]
    assert got_x.dtype == torch.bfloat16 and got_w.dtype == torch.float32  # x's, the master's
    assert_gemm_close(got_x, want_x)
    assert_gemm_close(got_w, want_w)
