import dataclasses

import pytest
import torch

from megatron_qarl.quant import aligned_grouped_linear, get_scheme
from qarl_kernels.grouped_mm import bf16_grouped_linear, grouped_mm, grouped_weight_grad
from qarl_kernels.fp8_dequantize import fp8_dequantize
from qarl_kernels.moe_backward import (bf16_grouped_backward, fp8_grouped_backward,
                                      grouped_grad_weight, int8_grouped_backward,
                                      w4a16_grouped_grad_input)


def _case(device):
    torch.manual_seed(0)
    scheme = get_scheme("w4a16-g32")
    master = torch.randn(3, 24, 64, device=device)
    tokens = torch.tensor([4, 0, 3])
    x = torch.randn(7, 64, device=device).bfloat16().requires_grad_()
    grad_out = torch.randn(7, 24, device=device).bfloat16()
    return scheme, master, tokens, x, grad_out


def test_grads_match_the_ste_reference(device, assert_gemm_close):
    scheme, master, tokens, x, grad_out = _case(device)
    master.requires_grad_()
    qweight = scheme.quantize_weight(master.detach())
    # the STE reference (pure torch; CUDA kernels are not registered in this test)
    aligned_grouped_linear(x, master, qweight, tokens).backward(grad_out.float().bfloat16())
    assert_gemm_close(w4a16_grouped_grad_input(grad_out, qweight, tokens), x.grad)
    grad_w = grouped_grad_weight(grad_out, x.detach(), tokens)
    assert grad_w.dtype == torch.bfloat16
    assert not grad_w[1].any()  # the expert without tokens
    assert_gemm_close(grad_w, master.grad)


@pytest.mark.parametrize("use_torch", [True, False])
def test_torch_grouped_mm_and_fallback_agree(use_torch, device, assert_gemm_close):
    _, _, tokens, x, grad_out = _case(device)
    x = x.detach()
    b = torch.randn(3, 64, 24, device=device).bfloat16()
    loop = [x[:4] @ b[0], x[4:4] @ b[1], x[4:] @ b[2]]
    assert_gemm_close(grouped_mm(x, b, tokens, use_torch), torch.cat(loop))
    want = torch.stack([grad_out[:4].t() @ x[:4], torch.zeros(24, 64, device=device),
                        grad_out[4:].t() @ x[4:]])
    assert_gemm_close(grouped_weight_grad(grad_out, x, tokens, use_torch), want)


@pytest.mark.parametrize("available", [True, False])
def test_grouped_mm_takes_torch_wherever_it_runs(available, monkeypatch):
    """Unless told, grouped_mm and grouped_weight_grad take torch._grouped_mm wherever it runs
    (CPU, SM90+): the per-expert loop reads the counts on the host, a sync per call that keeps
    a decode step out of CUDA graphs."""
    from qarl_kernels import grouped_mm as module
    calls = []
    monkeypatch.setattr(module, "torch_grouped_mm_available", lambda device: available)
    monkeypatch.setattr(torch, "_grouped_mm", lambda a, b, offs: calls.append(offs),
                        raising=False)
    x, tokens = torch.randn(4, 8), torch.tensor([4])
    grouped_mm(x, torch.randn(1, 8, 8), tokens)
    grouped_weight_grad(x, x, tokens)
    assert len(calls) == (2 if available else 0)


def test_torch_grouped_mm_takes_strided_and_expanded_inputs(device, assert_gemm_close):
    """Autograd hands the backward gradients in any layout (y.sum()'s is expanded, strides
    (0, 0)), and a caller's x may be a strided view: _grouped_mm refused both (a review)."""
    _, _, tokens, x, _ = _case(device)
    wide = torch.stack([x.detach()] * 2, dim=-1).flatten(1)[:, ::2]  # x, column stride 2
    b = torch.randn(3, 64, 24, device=device).bfloat16()
    assert_gemm_close(grouped_mm(wide, b, tokens, True), grouped_mm(x.detach(), b, tokens, True))
    ones = torch.ones((), device=device, dtype=torch.bfloat16).expand(x.shape[0], 24)
    assert_gemm_close(grouped_weight_grad(ones, wide, tokens, True),
                      grouped_weight_grad(ones.contiguous(), x.detach(), tokens, True))


def test_fallback_leaves_padding_rows_and_refuses_counts_past_x(device):
    """Before SM90 (no torch._grouped_mm) the loop split x by the counts, which raised on a
    fixed-size exchange's padding rows past their sum."""
    _, _, tokens, x, grad_out = _case(device)
    padded = torch.cat([x.detach(), torch.randn(2, 64, device=device).bfloat16()])
    b = torch.randn(3, 64, 24, device=device).bfloat16()
    y = grouped_mm(padded, b, tokens, use_torch=False)
    assert y.shape == (9, 24) and not y[7:].any()
    torch.testing.assert_close(y[:7], grouped_mm(x.detach(), b, tokens, use_torch=False))
    grad_padded = torch.cat([grad_out, torch.randn(2, 24, device=device).bfloat16()])
    torch.testing.assert_close(grouped_weight_grad(grad_padded, padded, tokens, False),
                               grouped_weight_grad(grad_out, x.detach(), tokens, False))
    with pytest.raises(ValueError, match="sums to 7 but x has 5 rows"):
        grouped_mm(x.detach()[:5], b, tokens, use_torch=False)


def test_fallback_keeps_decode_out_of_cuda_graphs(monkeypatch):
    """graph_blocker asks the registered op: before SM90 the bf16 loop reads its counts on the
    host, which a graph capture cannot."""
    from megatron_qarl.quant import NoQuant, ops

    monkeypatch.setitem(ops._GROUPED, ops._key(NoQuant, "cuda"), bf16_grouped_linear)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for capability, reads in (((8, 0), True), ((9, 0), False)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_, c=capability: c)
        assert ops.grouped_reads_counts_on_host(NoQuant(), "cuda") is reads


def test_fp8_operand_is_the_reference_weight_rounded_to_bf16(device):
    torch.manual_seed(0)
    scheme = get_scheme("fp8-block")
    qweight = scheme.quantize_weight(torch.randn(3, 200, 300, device=device))  # ragged blocks
    operand = fp8_dequantize(qweight, torch.tensor([2, 0, 1]))
    want = scheme.dequantize(qweight).bfloat16()
    assert torch.equal(operand[0], want[0]) and torch.equal(operand[2], want[2])
    assert torch.equal(fp8_dequantize(qweight), want)  # without counts: every expert


@pytest.mark.parametrize("scheme_name,backward", [("fp8-block", fp8_grouped_backward),
                                                  ("int8", int8_grouped_backward)])
def test_w8a8_grads_match_the_ste_reference(scheme_name, backward, device, assert_gemm_close):
    torch.manual_seed(0)
    scheme = get_scheme(scheme_name)
    master = torch.randn(3, 136, 256, device=device, requires_grad=True)
    qweight = scheme.quantize_weight(master.detach())
    tokens = torch.tensor([4, 0, 3])
    x = torch.randn(7, 256, device=device).bfloat16().requires_grad_()
    grad_out = torch.randn(7, 136, device=device).bfloat16()
    # the STE reference (pure torch, fp32 operand; CUDA kernels are not registered here)
    aligned_grouped_linear(x, master, qweight, tokens).backward(grad_out)
    grad_x, grad_w = backward(grad_out, x.detach(), qweight, tokens)
    # grad_x: the bf16-rounded operand (<= 2^-9 relative per weight) on top of summation order
    err = (grad_x.float() - x.grad.float()).norm() / x.grad.float().norm()
    assert err < 2**-7, err  # 2.6e-3 on the CPU; a wrong scale or block would give O(1)
    assert grad_w.dtype == torch.bfloat16 and not grad_w[1].any()
    assert_gemm_close(grad_w, master.grad)


def test_bf16_grouped_ops_match_the_none_schemes_reference(device, assert_gemm_close):
    """Scheme 'none' grouped experts (--moe-grouped-gemm): the forward op against the
    reference, with padding rows past the counts (a fixed-size exchange), and the backward
    against the reference STE, which for bf16 weights is the true gradient."""
    torch.manual_seed(0)
    scheme = get_scheme("none")
    master = torch.randn(3, 24, 64, device=device).bfloat16().requires_grad_()
    qweight = scheme.quantize_weight(master.detach())
    tokens = torch.tensor([4, 0, 3])
    x = torch.randn(9, 64, device=device).bfloat16()  # 2 padding rows
    want = scheme.reference_grouped_matmul(x, qweight, tokens)
    got = bf16_grouped_linear(x, qweight, tokens)
    assert got.dtype == torch.bfloat16
    assert_gemm_close(got[:7], want[:7])

    x = x[:7].clone().requires_grad_()
    grad_out = torch.randn(7, 24, device=device).bfloat16()
    aligned_grouped_linear(x, master, qweight, tokens).backward(grad_out)
    grad_x, grad_w = bf16_grouped_backward(grad_out, x.detach(), qweight, tokens)
    assert_gemm_close(grad_x, x.grad)
    assert not grad_w[1].any()
    assert_gemm_close(grad_w, master.grad)
    with pytest.raises(ValueError, match="tokens_per_expert"):
        bf16_grouped_linear(x, qweight, torch.tensor([4, 3]))


@pytest.mark.parametrize("experts,rows,taken", [
    (128, 1, True), (128, 2047, True),
    (128, 2048, False),  # from 2048 rows an expert dequantize + _grouped_mm is as fast
    (16, 4096, False),
])
def test_grad_input_takes_the_ws_kernel_by_rows_per_expert(monkeypatch, experts, rows, taken):
    """The rule of moe_backward.grad_input_takes_ws, where the kernel applies."""
    from qarl_kernels import moe_backward
    monkeypatch.setattr(moe_backward, "applies_grad_input", lambda g, q: True)
    scheme = get_scheme("w4a16")
    qweight = scheme.quantize_weight(torch.zeros(experts, 128, 256, dtype=torch.bfloat16))
    grad_out = torch.empty(experts * rows, 128, dtype=torch.bfloat16)
    assert moe_backward.grad_input_takes_ws(grad_out, qweight) == taken
    kept = dataclasses.replace(qweight, keep_operand=True)
    assert not moe_backward.grad_input_takes_ws(grad_out, kept)


@pytest.mark.parametrize("backward", [fp8_grouped_backward, int8_grouped_backward])
def test_backward_ops_check_their_counts(backward, device):
    """Called on their own (they are registered ops), too few counts read past them and float
    counts were taken (a review)."""
    scheme = get_scheme("fp8-block" if backward is fp8_grouped_backward else "int8")
    qweight = scheme.quantize_weight(torch.randn(3, 24, 128, device=device))
    x, grad_out = torch.randn(7, 128, device=device), torch.randn(7, 24, device=device)
    for counts in (torch.tensor([4, 3]), torch.tensor([4.0, 0.0, 3.0])):
        with pytest.raises(ValueError, match="tokens_per_expert: "):
            backward(grad_out, x, qweight, counts)
